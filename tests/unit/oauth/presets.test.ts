// Provider presets as data: each is enabled by its env pair, and their differences (endpoints,
// scopes, profile mapping, what counts as a verified address) hold without any network: GitHub's
// profile is read over real HTTP from a local server shaped like its API.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../../app/auth/core/config.server";
import { standardProfile } from "../../../app/auth/oauth/presets/definition";
import { discordProfile } from "../../../app/auth/oauth/presets/discord.server";
import { githubProfile } from "../../../app/auth/oauth/presets/github.server";
import { oauthDefinitions } from "../../../app/auth/oauth/presets/index.server";
import { microsoftEntraIdProvider } from "../../../app/auth/oauth/presets/microsoft-entra-id.server";
import { fetchJson, OutboundError, outboundBudget } from "../../../app/auth/oauth/http.server";
import { testConfig } from "../support";

const ALL_PRESETS = {
  AUTH_GITHUB_ID: "gh",
  AUTH_GITHUB_SECRET: "gh-s",
  AUTH_GOOGLE_ID: "go",
  AUTH_GOOGLE_SECRET: "go-s",
  AUTH_GITLAB_ID: "gl",
  AUTH_GITLAB_SECRET: "gl-s",
  AUTH_DISCORD_ID: "dc",
  AUTH_DISCORD_SECRET: "dc-s",
  AUTH_MICROSOFT_ENTRA_ID_ID: "ms",
  AUTH_MICROSOFT_ENTRA_ID_SECRET: "ms-s",
};

describe("OAuth presets", () => {
  it("are off without their env pair, and each pair turns one on with its id, type and client", () => {
    expect(oauthDefinitions(testConfig())).toEqual([]);
    const defs = oauthDefinitions(testConfig(ALL_PRESETS));
    expect(defs.map((d) => [d.id, d.type, d.clientId])).toEqual([
      ["discord", "oauth", "dc"],
      ["github", "oauth", "gh"],
      ["gitlab", "oidc", "gl"],
      ["google", "oidc", "go"],
      ["microsoft-entra-id", "oidc", "ms"],
    ]);
  });

  it("a half-configured pair is a configuration error naming the missing variable", () => {
    expect(() => testConfig({ AUTH_GITHUB_ID: "gh" })).toThrow(ConfigError);
    expect(() => testConfig({ AUTH_GITHUB_ID: "gh" })).toThrow(/AUTH_GITHUB_SECRET is required/);
  });

  it("the generic provider comes from AUTH_OIDC_* with discovery, and federated sign-out is opt-in", () => {
    const base = { AUTH_OIDC_ISSUER: "https://id.example.com", AUTH_OIDC_ID: "c", AUTH_OIDC_SECRET: "s" };
    const [oidc] = oauthDefinitions(testConfig(base));
    expect(oidc).toMatchObject({ id: "oidc", type: "oidc", issuer: "https://id.example.com", scope: "openid profile email", federatedSignOut: false });
    expect(oauthDefinitions(testConfig({ ...base, AUTH_OIDC_FEDERATED_SIGNOUT: "true" }))[0]!.federatedSignOut).toBe(true);
  });

  it("the plain OAuth 2.0 presets name every endpoint; the OIDC ones an issuer", () => {
    for (const d of oauthDefinitions(testConfig(ALL_PRESETS))) {
      if (d.type === "oauth") {
        expect(d.endpoints?.authorization, d.id).toMatch(/^https:\/\//);
        expect(d.endpoints?.token, d.id).toMatch(/^https:\/\//);
        expect(d.fetchProfile, d.id).toBeTypeOf("function");
      } else {
        expect(d.issuer, d.id).toMatch(/^https:\/\//);
        expect(d.scope.split(" "), d.id).toContain("openid");
      }
    }
  });

  it("all sixteen presets, without the test hook, name only their providers' https: hosts; with it, only the given origin", async () => {
    const { PRESET_IDS } = await import("../../../app/auth/core/config.server");
    const { presetDefinition } = await import("../../../app/auth/oauth/presets/index.server");
    const config = testConfig();
    expect(PRESET_IDS).toHaveLength(16);
    for (const id of PRESET_IDS) {
      const client = { clientId: "c", clientSecret: "s", issuer: "https://tenant.example.com" };
      const urls = (d: ReturnType<typeof presetDefinition>) => [d.issuer, ...Object.values(d.endpoints ?? {})].filter((u): u is string => typeof u === "string");
      for (const url of urls(presetDefinition(id, client, config))) expect(new URL(url).protocol, `${id} ${url}`).toBe("https:");
      const tenant = ["auth0", "cognito", "keycloak", "okta"].includes(id);
      for (const url of urls(presetDefinition(id, tenant ? client : { clientId: "c", clientSecret: "s" }, config, "http://127.0.0.1:9"))) {
        expect(new URL(url).origin, `${id} ${url}`).toBe(tenant ? "https://tenant.example.com" : "http://127.0.0.1:9");
      }
    }
  });

  it("standard claims: the address lower-cased, verified only when email_verified says so", () => {
    expect(standardProfile({ sub: "1", email: "Ann@Example.COM", email_verified: true, name: "Ann", picture: "https://p/x" })).toEqual({
      id: "1",
      email: "ann@example.com",
      emailVerified: true,
      name: "Ann",
      image: "https://p/x",
    });
    expect(standardProfile({ sub: "1", email: "a@b.c", email_verified: "true" }).emailVerified).toBe(true);
    expect(standardProfile({ sub: "1", email: "a@b.c" }).emailVerified).toBe(false);
    expect(standardProfile({ sub: "1", preferred_username: "ann" }).name).toBe("ann");
    expect(() => standardProfile({ email: "a@b.c" })).toThrow(/sub/);
  });

  it("Entra ID: the ID token's issuer is its tenant's, and its address counts as verified only with xms_edov", () => {
    const entra = microsoftEntraIdProvider({ clientId: "ms", clientSecret: "s" });
    expect(entra.idTokenIssuer!({ tid: "9188040d-6c67-4c5b-b112-36a304b66dad" })).toBe(
      "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0",
    );
    expect(entra.discoveryIssuer).toBe("https://login.microsoftonline.com/{tenantid}/v2.0");
    const answer = new URLSearchParams();
    expect(entra.profile!({ sub: "x", email: "a@b.c", email_verified: true }, answer).emailVerified).toBe(false);
    expect(entra.profile!({ sub: "x", email: "a@b.c", xms_edov: false }, answer).emailVerified).toBe(false);
    expect(entra.profile!({ sub: "x", email: "a@b.c", xms_edov: true }, answer).emailVerified).toBe(true);
    expect(entra.profile!({ sub: "x", email: "a@b.c", xms_edov: "1" }, answer).emailVerified).toBe(true);
  });

  it("Discord: verified only with verified: true; avatar URL from id and hash", () => {
    expect(discordProfile({ id: "42", username: "ann", global_name: "Ann", email: "A@B.C", verified: true, avatar: "abc" })).toEqual({
      id: "42",
      email: "a@b.c",
      emailVerified: true,
      name: "Ann",
      image: "https://cdn.discordapp.com/avatars/42/abc.png",
    });
    expect(discordProfile({ id: "42", username: "ann", email: "a@b.c", verified: false, avatar: null })).toMatchObject({
      emailVerified: false,
      image: null,
      name: "ann",
    });
  });
});

describe("GitHub profile over HTTP (a local server shaped like api.github.com)", () => {
  let server: Server;
  let api: string;
  let emails: unknown = [];
  const seen: { path: string; authorization?: string; userAgent?: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ path: req.url ?? "", authorization: req.headers.authorization, userAgent: req.headers["user-agent"] });
      res.setHeader("Content-Type", "application/json");
      if (req.url === "/user") return res.end(JSON.stringify({ id: 583231, login: "octocat", name: null, avatar_url: "https://avatars/1" }));
      if (req.url === "/user/emails") return res.end(JSON.stringify(emails));
      res.statusCode = 404;
      res.end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const fetcher = (url: string, token: string) =>
    fetchJson("profile", url, outboundBudget(testConfig()), { headers: { "User-Agent": "Vestibule", Authorization: `Bearer ${token}` } });

  it("uses the primary verified address", async () => {
    emails = [
      { email: "old@example.com", primary: false, verified: true },
      { email: "Octo@Example.com", primary: true, verified: true },
    ];
    expect(await githubProfile(fetcher, "tok", api)).toEqual({
      id: "583231",
      email: "octo@example.com",
      emailVerified: true,
      name: "octocat",
      image: "https://avatars/1",
    });
    expect(seen.at(-1)).toMatchObject({ path: "/user/emails", authorization: "Bearer tok", userAgent: "Vestibule" });
  });

  it("never an unverified address, even the primary one: another verified one, or none at all", async () => {
    emails = [
      { email: "primary@example.com", primary: true, verified: false },
      { email: "backup@example.com", primary: false, verified: true },
    ];
    expect((await githubProfile(fetcher, "tok", api)).email).toBe("backup@example.com");
    emails = [{ email: "primary@example.com", primary: true, verified: false }];
    expect(await githubProfile(fetcher, "tok", api)).toMatchObject({ email: null, emailVerified: false });
  });

  it("an API answering an error is an OutboundError (→ OAuthCallback)", async () => {
    await expect(fetcher(`${api}/nope`, "tok")).rejects.toBeInstanceOf(OutboundError);
  });
});
