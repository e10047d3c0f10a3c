// Every preset against a local imitation of its provider (tests/support/provider-imitation.ts):
// the authorization request it sends, how it authenticates at the token endpoint, and its profile
// mapping and quirks, with the provider's answers in the provider's own shapes. The presets with a
// fixed host are pointed at the imitation by presetDefinition's `origin` test hook and driven
// through the strategy's two legs as the sign-in and callback routes call them; the presets with
// tenants are turned on by their AUTH_<PRESET>_* variables and signed in through the real routes.
import { generateKeyPair, exportPKCS8, jwtVerify } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { getConfig, resetConfig, type PresetClientConfig, type PresetId } from "../../../app/auth/core/config.server.ts";
import { clearOAuthCaches } from "../../../app/auth/oauth/http.server.ts";
import type { OAuthProfile } from "../../../app/auth/oauth/presets/definition.ts";
import { presetDefinition } from "../../../app/auth/oauth/presets/index.server.ts";
import { OAuthStrategy } from "../../../app/auth/oauth/strategy.server.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, get, ORIGIN, post } from "../../support/http.ts";
import { authorizationUrlOf, deliver, sessionOf, startSignIn } from "../../support/oauth-flow.ts";
import { startImitation, type Imitation, type ImitationSettings } from "../../support/provider-imitation.ts";

let imitation: Imitation;

beforeAll(async () => {
  imitation = await startImitation();
});
afterAll(() => imitation?.stop());
beforeEach(async () => {
  clearOAuthCaches();
  await resetDatabase();
});

type Run = { profile: OAuthProfile; authorization: URLSearchParams; signInCookies: string[]; tokenRequest: { headers: Record<string, unknown>; body: URLSearchParams } };

/** One sign-in with a fixed-host preset on the imitation: both legs of the strategy; verify() returns the profile. */
async function signInWith(id: PresetId, settings: ImitationSettings, client: Partial<PresetClientConfig> = {}): Promise<Run> {
  imitation.set(settings);
  const definition = presetDefinition(id, { ...imitation.client, ...client }, getConfig(), imitation.origin);
  const strategy = new OAuthStrategy<OAuthProfile>(definition, getConfig(), async ({ profile }) => profile);
  const jar = new CookieJar();
  const start = await strategy.authenticate(post(`/auth/signin/${id}`, {}, { jar })).then(
    () => {
      throw new Error("the sign-in leg must answer with a redirect");
    },
    (thrown: unknown) => thrown,
  );
  if (!(start instanceof Response)) throw start;
  jar.apply(start);
  const answer = await fetch(start.headers.get("Location")!, { redirect: "manual" });
  let callback: Request;
  if (answer.status === 302) {
    const back = new URL(answer.headers.get("Location")!);
    expect(back.origin).toBe(ORIGIN);
    callback = get(back.pathname + back.search, { jar });
  } else {
    // form_post: the provider's page POSTs the fields to the callback from the provider's site.
    const html = await answer.text();
    const action = new URL(/action="([^"]+)"/.exec(html)![1]!);
    const fields = Object.fromEntries([...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replace(/&quot;/g, '"').replace(/&amp;/g, "&")]));
    callback = post(action.pathname, fields, { jar, headers: { Origin: imitation.origin, "Sec-Fetch-Site": "cross-site" } });
  }
  const profile = await strategy.authenticate(callback);
  const token = imitation.requests.find((r) => r.method === "POST")!;
  return {
    profile,
    authorization: imitation.authorization!,
    signInCookies: start.headers.getSetCookie(),
    tokenRequest: { headers: token.headers as Record<string, unknown>, body: new URLSearchParams(token.body) },
  };
}

const basic = (headers: Record<string, unknown>) => typeof headers.authorization === "string" && headers.authorization.startsWith("Basic ");

describe(`OAuth presets against imitations of their providers (${dbLabel})`, () => {
  test("GitHub: plain OAuth 2.0; the address is the primary verified one of /user/emails, never a private unverified one", async () => {
    const run = await signInWith("github", {
      clientAuth: "client_secret_post",
      api: {
        "/user": { id: 583231, login: "octocat", name: null, email: null, avatar_url: "https://avatars.githubusercontent.com/u/583231" },
        "/user/emails": [
          { email: "octocat@users.noreply.github.com", primary: false, verified: true, visibility: null },
          { email: "Octo@Example.com", primary: true, verified: true, visibility: "private" },
          { email: "unverified@example.com", primary: false, verified: false, visibility: null },
        ],
      },
    });
    expect(run.profile).toEqual({ id: "583231", email: "octo@example.com", emailVerified: true, name: "octocat", image: "https://avatars.githubusercontent.com/u/583231" });
    expect(run.authorization.get("scope")).toBe("read:user user:email");
    expect(run.authorization.get("code_challenge_method")).toBe("S256");
    expect(run.tokenRequest.body.get("client_secret")).toBe(imitation.client.clientSecret);
    const apiCall = imitation.requests.find((r) => r.path === "/user")!;
    expect(apiCall.headers["user-agent"]).toBe(getConfig().siteName);
    expect(apiCall.headers.accept).toBe("application/vnd.github+json");

    const unverifiedOnly = await signInWith("github", {
      clientAuth: "client_secret_post",
      api: { "/user": { id: 1, login: "ghost" }, "/user/emails": [{ email: "ghost@example.com", primary: true, verified: false }] },
    });
    expect(unverifiedOnly.profile).toMatchObject({ id: "1", email: null, emailVerified: false });
  });

  test("X (Twitter): OAuth 2.0 with PKCE and Basic client authentication; /2/users/me's data, and never an address", async () => {
    const run = await signInWith("twitter", {
      clientAuth: "client_secret_basic",
      api: { "/2/users/me?user.fields=profile_image_url": { data: { id: "2244994945", name: "X Dev", username: "XDevelopers", profile_image_url: "https://pbs.twimg.com/p.jpg" } } },
    });
    expect(run.profile).toEqual({ id: "2244994945", email: null, emailVerified: false, name: "X Dev", image: "https://pbs.twimg.com/p.jpg" });
    expect(run.authorization.get("scope")).toBe("users.read tweet.read offline.access");
    expect(run.authorization.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    expect(basic(run.tokenRequest.headers)).toBe(true);
    expect(run.tokenRequest.body.get("code_verifier")).toBeTruthy();
  });

  test("Facebook: Graph /me with id, name, email and picture.data.url; the address is never taken as verified", async () => {
    const run = await signInWith("facebook", {
      clientAuth: "client_secret_post",
      api: { "/me?fields=id,name,email,picture": { id: "10158", name: "Fay Book", email: "fay@example.com", picture: { data: { height: 50, is_silhouette: false, url: "https://platform-lookaside.fbsbx.com/p", width: 50 } } } },
    });
    expect(run.profile).toEqual({ id: "10158", email: "fay@example.com", emailVerified: false, name: "Fay Book", image: "https://platform-lookaside.fbsbx.com/p" });
    expect(run.authorization.get("scope")).toBe("email public_profile");
  });

  test("Discord: /users/@me; verified only with verified: true; the avatar URL from id and hash", async () => {
    const run = await signInWith("discord", {
      clientAuth: "client_secret_post",
      api: { "/api/users/@me": { id: "80351110224678912", username: "nelly", global_name: "Nelly", avatar: "8342729096ea3675442027381ff50dfe", verified: true, email: "nelly@discord.com" } },
    });
    expect(run.profile).toEqual({
      id: "80351110224678912",
      email: "nelly@discord.com",
      emailVerified: true,
      name: "Nelly",
      image: "https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png",
    });
    expect(run.authorization.get("scope")).toBe("identify email");
  });

  test("Spotify: /v1/me's display_name and first image; Spotify's address is unverified", async () => {
    const run = await signInWith("spotify", {
      clientAuth: "client_secret_basic",
      api: { "/v1/me": { id: "wizzler", display_name: "JM Wizzler", email: "wizzler@example.com", images: [{ url: "https://i.scdn.co/image/1", height: 300, width: 300 }], product: "premium" } },
    });
    expect(run.profile).toEqual({ id: "wizzler", email: "wizzler@example.com", emailVerified: false, name: "JM Wizzler", image: "https://i.scdn.co/image/1" });
    expect(run.authorization.get("scope")).toBe("user-read-email");
    expect(basic(run.tokenRequest.headers)).toBe(true);
  });

  test("Google: OpenID by discovery, access_type=offline, email_verified as sent", async () => {
    const run = await signInWith("google", {
      clientAuth: "client_secret_basic",
      idToken: { sub: "110169484474386276334", email: "gina@gmail.com", email_verified: true, name: "Gina", picture: "https://lh3.googleusercontent.com/a/x", hd: "example.com" },
    });
    expect(run.profile).toEqual({ id: "110169484474386276334", email: "gina@gmail.com", emailVerified: true, name: "Gina", image: "https://lh3.googleusercontent.com/a/x" });
    expect(run.authorization.get("access_type")).toBe("offline");
    expect(run.authorization.get("nonce")).toMatch(/^[\w-]{43}$/);
  });

  test("GitLab: OpenID by discovery; userinfo's claims merged with the ID token's", async () => {
    const run = await signInWith("gitlab", {
      clientAuth: "client_secret_basic",
      idToken: { sub: "1234" },
      userinfo: { sub: "1234", name: "Gil Lab", nickname: "gil", email: "gil@example.com", email_verified: true, picture: "https://gitlab.com/uploads/a.png", groups: [] },
    });
    expect(run.profile).toEqual({ id: "1234", email: "gil@example.com", emailVerified: true, name: "Gil Lab", image: "https://gitlab.com/uploads/a.png" });
  });

  test("LinkedIn: OpenID at the /oauth issuer, client secret in the body", async () => {
    const run = await signInWith("linkedin", {
      issuerPath: "/oauth",
      clientAuth: "client_secret_post",
      idToken: { sub: "782bbtaQ", name: "Lin Ked", given_name: "Lin", family_name: "Ked", picture: "https://media.licdn.com/p", email: "lin@example.com", email_verified: true, locale: "en-US" },
    });
    expect(run.profile).toEqual({ id: "782bbtaQ", email: "lin@example.com", emailVerified: true, name: "Lin Ked", image: "https://media.licdn.com/p" });
    expect(run.tokenRequest.body.get("client_secret")).toBe(imitation.client.clientSecret);
  });

  test("Slack: OpenID at https://slack.com's imitation; the workspace claims ride along", async () => {
    const run = await signInWith("slack", {
      clientAuth: "client_secret_post",
      idToken: { sub: "U0R7JM", "https://slack.com/team_id": "T0R7GR", email: "sam@example.com", email_verified: true, name: "Sam Slack", picture: "https://secure.gravatar.com/a.jpg" },
    });
    expect(run.profile).toEqual({ id: "U0R7JM", email: "sam@example.com", emailVerified: true, name: "Sam Slack", image: "https://secure.gravatar.com/a.jpg" });
    expect(run.authorization.get("scope")).toBe("openid profile email");
  });

  test("Twitch: OpenID at /oauth2; the address and picture are asked for with the claims parameter, the name is preferred_username, the token response's scope array is accepted", async () => {
    const run = await signInWith("twitch", {
      issuerPath: "/oauth2",
      clientAuth: "client_secret_post",
      tokenExtras: { refresh_token: "twitch-refresh", scope: ["openid", "user:read:email"], token_type: "bearer" },
      idToken: { sub: "713936733", preferred_username: "twitchdev", email: "dev@twitch.tv", email_verified: true, picture: "https://static-cdn.jtvnw.net/p.png" },
    });
    expect(run.profile).toEqual({ id: "713936733", email: "dev@twitch.tv", emailVerified: true, name: "twitchdev", image: "https://static-cdn.jtvnw.net/p.png" });
    const claims = JSON.parse(run.authorization.get("claims")!) as { id_token: Record<string, null> };
    expect(Object.keys(claims.id_token).sort()).toEqual(["email", "email_verified", "picture", "preferred_username"]);
    expect(run.authorization.get("scope")).toBe("openid user:read:email");
  });

  test("Microsoft Entra ID, one tenant (AUTH_MICROSOFT_ENTRA_ID_ISSUER): the address is verified only with xms_edov", async () => {
    const settings = (edov: boolean | undefined): ImitationSettings => ({
      issuerPath: "/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0",
      clientAuth: "client_secret_basic",
      idToken: { sub: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ", tid: "9188040d-6c67-4c5b-b112-36a304b66dad", email: "ann@contoso.com", name: "Ann", ...(edov === undefined ? {} : { xms_edov: edov }) },
    });
    const issuer = `${imitation.origin}/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0`;
    expect((await signInWith("microsoft-entra-id", settings(undefined), { issuer })).profile).toMatchObject({ email: "ann@contoso.com", emailVerified: false });
    clearOAuthCaches();
    expect((await signInWith("microsoft-entra-id", settings(true), { issuer })).profile).toMatchObject({ email: "ann@contoso.com", emailVerified: true });
    clearOAuthCaches();
    expect((await signInWith("microsoft-entra-id", settings(false), { issuer })).profile.emailVerified).toBe(false);
  });

  test("Apple: form_post answered cross-site (SameSite=None check cookies), a client secret JWT signed with the team's key, the name from the one-time user field", async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
    const appleKey = { teamId: "TEAM123456", keyId: "KEY1234567", privateKeyPem: await exportPKCS8(privateKey) };
    const secrets: string[] = [];
    const settings = (user?: object): ImitationSettings => ({
      clientAuth: "client_secret_post",
      checkSecret: async (secret) => {
        secrets.push(secret);
        const { payload, protectedHeader } = await jwtVerify(secret, publicKey, { issuer: appleKey.teamId, subject: imitation.client.clientId, audience: imitation.origin, algorithms: ["ES256"] });
        return protectedHeader.kid === appleKey.keyId && payload.exp! - payload.iat! <= 15_552_000;
      },
      idToken: { sub: "001234.abcdef", email: "x7k2@privaterelay.appleid.com", email_verified: "true", is_private_email: "true", auth_time: Math.floor(Date.now() / 1000) },
      ...(user ? { formPostFields: { user: JSON.stringify(user) } } : {}),
    });

    const first = await signInWith("apple", settings({ name: { firstName: "Jane", lastName: "Appleseed" }, email: "x7k2@privaterelay.appleid.com" }), { appleKey });
    expect(first.profile).toEqual({ id: "001234.abcdef", email: "x7k2@privaterelay.appleid.com", emailVerified: true, name: "Jane Appleseed", image: null });
    expect(first.authorization.get("response_mode")).toBe("form_post");
    expect(first.authorization.get("scope")).toBe("openid name email");
    for (const name of ["authjs.state", "authjs.pkce.code_verifier", "authjs.nonce"]) {
      expect(first.signInCookies.find((c) => c.startsWith(`${name}=`)), name).toMatch(/SameSite=None/);
    }
    expect(secrets).toHaveLength(1);

    // Later sign-ins: Apple sends no user field, so no name.
    clearOAuthCaches();
    const later = await signInWith("apple", settings(), { appleKey });
    expect(later.profile).toMatchObject({ id: "001234.abcdef", name: null });

    // A ready client-secret JWT (Auth.js's AUTH_APPLE_SECRET) is sent as it is.
    clearOAuthCaches();
    const ready = await signInWith("apple", { ...settings(), checkSecret: (s) => s === "ready.made.jwt" }, { clientSecret: "ready.made.jwt" });
    expect(ready.profile.id).toBe("001234.abcdef");
  });
});

describe(`Presets with tenants, through the routes (${dbLabel})`, () => {
  /** Turns one preset on by its variables, pointed at the imitation's issuer, and signs in through /auth/signin and /auth/callback. */
  async function routeSignIn(env: string, id: string, settings: ImitationSettings, issuer: string) {
    imitation.set(settings);
    process.env[`AUTH_${env}_ID`] = imitation.client.clientId;
    process.env[`AUTH_${env}_SECRET`] = imitation.client.clientSecret;
    process.env[`AUTH_${env}_ISSUER`] = issuer;
    resetConfig();
    clearOAuthCaches();
    try {
      const jar = new CookieJar();
      const start = await startSignIn(jar, id, { callbackUrl: "/account" });
      const answer = await fetch(await authorizationUrlOf(start), { redirect: "manual" });
      const res = await deliver(jar, { kind: "redirect", url: answer.headers.get("Location")! }, id);
      return { res, jar, authorization: imitation.authorization! };
    } finally {
      for (const part of ["ID", "SECRET", "ISSUER"]) delete process.env[`AUTH_${env}_${part}`];
      resetConfig();
    }
  }

  const tenants: { env: string; id: string; issuerPath: string; stated?: (i: string) => string; claims: Record<string, unknown>; name: string }[] = [
    { env: "AUTH0", id: "auth0", issuerPath: "", stated: (i) => `${i}/`, claims: { sub: "auth0|5f7c8ec7c33c6c004bbafe82", email: "zero@example.com", email_verified: true, name: "Zero", nickname: "zero", picture: "https://s.gravatar.com/z.png" }, name: "Zero" },
    { env: "COGNITO", id: "cognito", issuerPath: "/us-east-1_AbCdEf123", claims: { sub: "9f2c0c2e-0000-4000-8000-000000000000", email: "cog@example.com", email_verified: "true", "cognito:username": "cogito" }, name: "cogito" },
    { env: "KEYCLOAK", id: "keycloak", issuerPath: "/realms/acme", claims: { sub: "f3b1c0de-kc", email: "kc@example.com", email_verified: true, preferred_username: "kc", name: "Kay Cloak" }, name: "Kay Cloak" },
    { env: "OKTA", id: "okta", issuerPath: "/oauth2/default", claims: { sub: "00uid4BxXw6I6TV4m0g3", email: "okta@example.com", email_verified: true, name: "Ok Ta" }, name: "Ok Ta" },
  ];

  for (const t of tenants) {
    test(`${t.id}: AUTH_${t.env}_ID/_SECRET/_ISSUER sign a new user in with the tenant's claims`, async () => {
      const { res, jar, authorization } = await routeSignIn(t.env, t.id, { issuerPath: t.issuerPath, ...(t.stated ? { statedIssuer: t.stated } : {}), clientAuth: "client_secret_basic", idToken: t.claims }, `${imitation.origin}${t.issuerPath}`);
      expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
      expect(authorization.get("redirect_uri")).toBe(`${ORIGIN}/auth/callback/${t.id}`);
      const session = await sessionOf(jar);
      expect(session?.user).toMatchObject({ email: t.claims.email, name: t.name });
      const account = await testDb().account.findFirstOrThrow({ where: { provider: t.id } });
      expect(account.providerAccountId).toBe(t.claims.sub);
    });
  }
});
