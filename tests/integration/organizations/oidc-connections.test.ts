// OpenID Connect connections of organizations (ADR 151, 164; docs/features/oidc-connections.md)
// against the project's real IdP (oidc-provider, tests/support/idp.ts) as the customer's identity
// provider, and the deliberately wrong one (tests/support/hostile-idp.ts) for what a real IdP never
// sends: a first sign-in creates the account and membership, the next finds the person by
// (connection, sub); another issuer, a discovery document naming another issuer, a wrong nonce or
// state, an address outside the connection's verified domains, an unverified (also Entra-style)
// address and an existing account whose owner did not start the sign-in are refused; removing the
// connection removes its identities and ends their sessions.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { addOidcConnection, oidcConnectionsForDomain } from "../../../app/auth/oidc-connections/index.ts";
import { endpointsRefusal, setOidcHostCheckTestSeam, urlRefusal } from "../../../app/auth/oidc-connections/connections.server.ts";
import { clearOAuthCaches } from "../../../app/auth/oauth/http.server.ts";
import * as account from "../../../app/routes/account.tsx";
import { runInProcess } from "../../support/cli.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { HOSTILE_CLIENT, startHostileIdp, type HostileIdp } from "../../support/hostile-idp.ts";
import { callRoute, CookieJar, get } from "../../support/http.ts";
import { startTestIdp, visitIdp, type TestIdp } from "../../support/idp.ts";
import { configure } from "../email/helpers.ts";
import { addMember, createOrg, formPost, jsonGet, jsonPost, member, ORIGIN, send, useApp } from "./helpers.ts";

useApp();

// The IdP's registered redirect URIs name the connections, so the tests give them these ids.
const CONN_A = "oidc-acme";
const CONN_B = "oidc-beta";
const CONN_H = "oidc-hostile";
const CLIENT_A = { clientId: "acme-app", clientSecret: "acme-app-secret-0123456789", callbackPath: `/sso/oidc/${CONN_A}/callback` };
const CLIENT_B = { clientId: "beta-app", clientSecret: "beta-app-secret-0123456789", callbackPath: `/sso/oidc/${CONN_B}/callback` };

const ADA = { sub: "acme-ada", email: "ada@acme.test", emailVerified: true, name: "Ada Acme", password: "ada-password" };
const UNVERIFIED = { sub: "acme-una", email: "una@acme.test", emailVerified: false, name: "Una", password: "una-password" };
const OUTSIDER = { sub: "acme-out", email: "out@elsewhere.test", emailVerified: true, name: "Out", password: "out-password" };
// Entra-shaped: a tenant, an `email`, and `email_verified` (which Entra's reading ignores) but no `xms_edov`.
const ENTRA_UNVERIFIED = { sub: "acme-ent", email: "ent@acme.test", emailVerified: true, name: "Ent", password: "ent-password", tid: "tenant-1" };
const ENTRA_VERIFIED = { sub: "acme-edv", email: "edv@acme.test", emailVerified: false, name: "Edv", password: "edv-password", tid: "tenant-1", xmsEdov: true };
// Org B's IdP vouching for an address on org A's verified domain.
const INTRUDER = { sub: "beta-boss", email: "boss@acme.test", emailVerified: true, name: "Boss", password: "boss-password" };

let idp: TestIdp;
let hostile: HostileIdp;
let orgA: string;
let orgB: string;

beforeAll(async () => {
  idp = await startTestIdp({ clients: [CLIENT_A, CLIENT_B], users: [ADA, UNVERIFIED, OUTSIDER, ENTRA_UNVERIFIED, ENTRA_VERIFIED, INTRUDER] });
  hostile = await startHostileIdp();
});

afterAll(async () => {
  await idp.stop();
  await hostile.stop();
});

async function org(slug: string, domain: string) {
  const o = await testDb().organization.create({ data: { name: slug.toUpperCase(), slug } });
  await testDb().organizationDomain.create({
    data: { organizationId: o.id, domain, verificationToken: "t", state: "verified", verifiedDomain: domain, verifiedAt: new Date() },
  });
  return o.id;
}

beforeEach(async () => {
  await resetDatabase();
  configure({ AUTH_ORGANIZATIONS: "true" });
  clearOAuthCaches();
  hostile.reset("ok");
  orgA = await org("acme", "acme.test");
  orgB = await org("beta", "beta.test");
  await testDb().organizationDomain.create({
    data: { organizationId: orgA, domain: "hostile.example", verificationToken: "t", state: "verified", verifiedDomain: "hostile.example", verifiedAt: new Date() },
  });
  const a = await addOidcConnection({ id: CONN_A, organizationId: orgA, issuer: idp.issuer, ...CLIENT_A, domains: ["acme.test"] });
  const b = await addOidcConnection({ id: CONN_B, organizationId: orgB, issuer: idp.issuer, ...CLIENT_B, domains: ["beta.test"] });
  const h = await addOidcConnection({ id: CONN_H, organizationId: orgA, issuer: hostile.issuer, ...HOSTILE_CLIENT, domains: ["hostile.example"] });
  if (!a.ok || !b.ok || !h.ok) throw new Error(`connections: ${JSON.stringify([a, b, h])}`);
});

/** The browser's start at /sso/oidc/<id>/signin: the IdP's authorization URL. */
async function start(connection: string, jar: CookieJar, callbackUrl = "/account"): Promise<string> {
  const res = await send(get(`/sso/oidc/${connection}/signin?callbackUrl=${encodeURIComponent(callbackUrl)}`, { jar }), jar);
  expect(res.status).toBe(302);
  return res.headers.get("Location")!;
}

/** A whole sign-in: start, the IdP's login page as `who`, back at the callback with the same browser. */
async function signInAs(connection: string, who: { email: string; password: string }, jar = new CookieJar()): Promise<Response> {
  const authorization = await start(connection, jar);
  const answer = await visitIdp(authorization, who);
  if (answer.kind !== "redirect") throw new Error("expected a redirect back");
  expect(answer.url.startsWith(`${ORIGIN}/sso/oidc/${connection}/callback?`)).toBe(true);
  return send(get(answer.url, { jar }), jar);
}

/** The hostile IdP answers at once (no login page): its redirect back, followed with the same browser. */
async function hostileSignIn(jar = new CookieJar()): Promise<Response> {
  const authorization = await start(CONN_H, jar);
  const back = await fetch(authorization, { redirect: "manual" });
  return send(get(back.headers.get("Location")!, { jar }), jar);
}

function signedIn(res: Response) {
  expect(res.status).toBe(302);
  expect(res.headers.get("Location")).not.toMatch(/error=/);
  expect(res.headers.getSetCookie().some((c) => /session-token=[^;]/.test(c))).toBe(true);
}

async function expectRefused(res: Response, code = "Callback") {
  expect(res.status).toBe(302);
  expect(res.headers.get("Location")).toContain(`error=${code}`);
  expect(res.headers.getSetCookie().some((c) => /session-token=[^;]/.test(c))).toBe(false);
}

describe(`OpenID Connect connections on ${dbLabel}`, () => {
  it("the authorization request: code flow, PKCE S256, state, nonce, the connection's redirect URI; unknown ids and organizations off are 404", async () => {
    const url = new URL(await start(CONN_A, new CookieJar()));
    expect(url.origin).toBe(new URL(idp.issuer).origin);
    const p = url.searchParams;
    expect(p.get("response_type")).toBe("code");
    expect(p.get("client_id")).toBe(CLIENT_A.clientId);
    expect(p.get("redirect_uri")).toBe(`${ORIGIN}/sso/oidc/${CONN_A}/callback`);
    expect(p.get("code_challenge_method")).toBe("S256");
    expect(p.get("state")).toBeTruthy();
    expect(p.get("nonce")).toBeTruthy();
    expect(p.get("scope")).toBe("openid email profile");
    expect((await send(get("/sso/oidc/nope/signin"))).status).toBe(404);
    configure({ AUTH_ORGANIZATIONS: undefined });
    expect((await send(get(`/sso/oidc/${CONN_A}/signin`))).status).toBe(404);
  });

  it("a first sign-in creates the account and its membership just in time; the next one finds the same person by (connection, sub)", async () => {
    const res = await signInAs(CONN_A, ADA);
    signedIn(res);
    expect(res.headers.get("Location")).toBe(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    const user = await testDb().user.findUniqueOrThrow({ where: { email: "ada@acme.test" } });
    expect(user.emailVerified).not.toBeNull();
    expect(await testDb().membership.findFirst({ where: { userId: user.id, organizationId: orgA } })).toMatchObject({ role: "member" });
    const identity = await testDb().oidcIdentity.findFirstOrThrow({ where: { connectionId: CONN_A, subject: ADA.sub } });
    expect(identity.userId).toBe(user.id);
    const session = await testDb().session.findFirstOrThrow({ where: { userId: user.id } });
    expect(session).toMatchObject({ method: "oidc-connection", credentialRef: `oidc-connection:${identity.id}` });
    expect(await testDb().organizationAuditEvent.findFirst({ where: { organizationId: orgA, type: "member-added" } })).toMatchObject({ actorId: user.id });
    // The account page names the method.
    const jar = new CookieJar().apply(res);
    const page = await callRoute(account.loader, get("/account", { jar }));
    const { sessions } = (await page.json()) as { sessions: { method: string | null; methodType: string | null }[] };
    // By its organization, as a SAML sign-in is ("<organization> (company sign-in)"), never the protocol.
    expect(sessions).toEqual([expect.objectContaining({ method: "ACME", methodType: "organization" })]);
    const html = await (await send(get("/account", { jar, headers: { Accept: "text/html" } }))).text();
    expect(html).toContain("Signed in through ACME (company sign-in)");

    const again = await signInAs(CONN_A, ADA);
    signedIn(again);
    expect(again.headers.get("Location")).toBe(`${ORIGIN}/account`);
    expect(await testDb().user.count()).toBe(1);
    expect(await testDb().oidcIdentity.count()).toBe(1);
    expect(await testDb().membership.count({ where: { userId: user.id } })).toBe(1);
  });

  it("an address outside the connection's verified domains is refused; so is one the IdP did not verify", async () => {
    await expectRefused(await signInAs(CONN_A, OUTSIDER));
    await expectRefused(await signInAs(CONN_A, UNVERIFIED));
    expect(await testDb().user.count()).toBe(0);
    expect(await testDb().oidcIdentity.count()).toBe(0);
  });

  it("an Entra-shaped token (tid) counts its address verified only with xms_edov, whatever email_verified says", async () => {
    await expectRefused(await signInAs(CONN_A, ENTRA_UNVERIFIED));
    expect(await testDb().user.count()).toBe(0);
    signedIn(await signInAs(CONN_A, ENTRA_VERIFIED));
    expect(await testDb().user.findUnique({ where: { email: "edv@acme.test" } })).not.toBeNull();
  });

  it("org B's connection asserting an address on org A's verified domain is refused; org B cannot add that domain either", async () => {
    const victim = await testDb().user.create({ data: { email: "boss@acme.test", emailVerified: new Date() } });
    await expectRefused(await signInAs(CONN_B, INTRUDER));
    expect(await testDb().oidcIdentity.count()).toBe(0);
    expect(await testDb().membership.count({ where: { userId: victim.id } })).toBe(0);
    const added = await addOidcConnection({ organizationId: orgB, issuer: idp.issuer, ...CLIENT_B, domains: ["acme.test"] });
    expect(added).toMatchObject({ ok: false, reason: { field: "domains" } });
  });

  it("an existing account with the address is not taken over; it is linked only when its owner, signed in, started the sign-in", async () => {
    const owner = await member("ada@acme.test");
    await expectRefused(await signInAs(CONN_A, ADA), "OAuthAccountNotLinked");
    // Someone else signed in starting it links nothing either.
    const other = await member("zed@beta.test");
    await expectRefused(await signInAs(CONN_A, ADA, other.jar), "OAuthAccountNotLinked");
    expect(await testDb().oidcIdentity.count()).toBe(0);
    signedIn(await signInAs(CONN_A, ADA, owner.jar));
    expect(await testDb().oidcIdentity.findFirst({ where: { connectionId: CONN_A } })).toMatchObject({ userId: owner.id });
    expect(await testDb().membership.count({ where: { userId: owner.id, organizationId: orgA } })).toBe(1);
  });

  it("the control: the hostile IdP in its correct mode signs in", async () => {
    signedIn(await hostileSignIn());
  });

  it("an ID token of another issuer, a wrong nonce, a failed exchange: refused with the one generic error", async () => {
    for (const mode of ["wrong-iss", "wrong-nonce", "missing-nonce", "wrong-aud", "bad-signature", "alg-none", "userinfo-sub-mismatch", "provider-error", "token-error"] as const) {
      hostile.reset(mode);
      await expectRefused(await hostileSignIn());
    }
    expect(await testDb().user.count()).toBe(0);
  });

  it("state: a callback in another browser, a changed state and a second use are refused", async () => {
    const jar = new CookieJar();
    const authorization = await start(CONN_H, jar);
    const back = (await fetch(authorization, { redirect: "manual" })).headers.get("Location")!;
    // Another browser (no check cookies): refused.
    await expectRefused(await send(get(back, { jar: new CookieJar() })));
    // A changed state in this browser: refused, and the flow is gone.
    const changed = new URL(back);
    changed.searchParams.set("state", "not-the-state");
    await expectRefused(await send(get(changed.href, { jar }), jar));
    await expectRefused(await send(get(back, { jar }), jar));
  });

  it("a discovery document naming another issuer is refused when adding the connection", async () => {
    // The same IdP by another name: its document says http://127.0.0.1:…, not http://localhost:….
    const other = idp.issuer.replace("127.0.0.1", "localhost");
    const added = await addOidcConnection({ organizationId: orgA, issuer: other, ...CLIENT_A, domains: ["acme.test"] });
    expect(added).toMatchObject({ ok: false, reason: { field: "issuer" } });
    if (!added.ok) expect(added.reason.detail).toMatch(/issuer/);
    const nothing = await addOidcConnection({ organizationId: orgA, issuer: "http://127.0.0.1:9/", ...CLIENT_A, domains: ["acme.test"] });
    expect(nothing).toMatchObject({ ok: false, reason: { field: "issuer" } });
    expect(await testDb().oidcConnection.count()).toBe(3);
  });

  it("the client secret is sealed at rest", async () => {
    const row = await testDb().oidcConnection.findUniqueOrThrow({ where: { id: CONN_A } });
    expect(row.clientSecretSealed).not.toContain(CLIENT_A.clientSecret);
    expect(row.clientSecretSealed.split(".")).toHaveLength(5);
  });

  it("oidcConnectionsForDomain: the connections of the organization that verified the domain", async () => {
    expect(await oidcConnectionsForDomain("ACME.test")).toEqual([{ id: CONN_A, organizationId: orgA, organizationName: "ACME", signInPath: `/sso/oidc/${CONN_A}/signin` }]);
    expect(await oidcConnectionsForDomain("beta.test")).toEqual([{ id: CONN_B, organizationId: orgB, organizationName: "BETA", signInPath: `/sso/oidc/${CONN_B}/signin` }]);
    expect(await oidcConnectionsForDomain("nobody.test")).toEqual([]);
  });

  it("removing the connection removes its identities and ends the sessions they started", async () => {
    const res = await signInAs(CONN_A, ADA);
    signedIn(res);
    const jar = new CookieJar().apply(res);
    expect((await (await send(get("/auth/session", { jar }))).json()) as unknown).not.toBeNull();
    const removed = await runInProcess("scripts/oidc-connection.ts", ["--remove", CONN_A]);
    expect(removed.code).toBe(0);
    expect(await testDb().oidcIdentity.count()).toBe(0);
    expect(await testDb().session.count({ where: { revokedAt: null } })).toBe(0);
    expect(await (await send(get("/auth/session", { jar }))).json()).toBeNull();
    expect((await send(get(`/sso/oidc/${CONN_A}/signin`))).status).toBe(404);
  });
});

/** An organization "gamma" with its verified domain, its owner signed in. */
async function gamma() {
  const owner = await member("owner@gamma.test");
  const org = await createOrg(owner.jar, "gamma");
  await testDb().organizationDomain.create({
    data: { organizationId: org.id, domain: "gamma.test", verificationToken: "t", state: "verified", verifiedDomain: "gamma.test", verifiedAt: new Date() },
  });
  return { owner, org };
}

describe(`the OpenID Connect section of /orgs/<slug> on ${dbLabel}`, () => {
  it("an owner adds a connection by form (no JavaScript): discovery checked, the secret sealed, the redirect URI shown, audited; then removes it", async () => {
    const { owner, org } = await gamma();
    const page = await send(get("/orgs/gamma", { jar: owner.jar, headers: { Accept: "text/html" } }));
    const html = await page.text();
    expect(html).toContain('id="org-oidc-form"');
    expect(html).toContain('name="domain:gamma.test"');

    const added = await formPost(owner.jar, "/orgs/gamma", { intent: "oidc-add", issuer: idp.issuer, clientId: "gamma-app", clientSecret: "gamma-secret-0123456789", "domain:gamma.test": "on", defaultRole: "admin" });
    expect(added.status).toBe(302);
    expect(added.headers.get("Location")).toMatch(/done=oidc-added/);
    const data = (await (await jsonGet(owner.jar, "/orgs/gamma")).json()) as { oidcConnections: { connections: { id: string; issuer: string; callbackUrl: string; defaultRole: string }[]; verifiedDomains: string[] } };
    expect(data.oidcConnections.verifiedDomains).toEqual(["gamma.test"]);
    const [conn] = data.oidcConnections.connections;
    expect(conn).toMatchObject({ issuer: idp.issuer, defaultRole: "admin", callbackUrl: `${ORIGIN}/sso/oidc/${conn!.id}/callback` });
    expect(JSON.stringify(data)).not.toContain("gamma-secret-0123456789");
    const row = await testDb().oidcConnection.findUniqueOrThrow({ where: { id: conn!.id } });
    expect(row).toMatchObject({ organizationId: org.id, domains: "gamma.test", clientId: "gamma-app" });
    expect(row.clientSecretSealed).not.toContain("gamma-secret");
    const event = await testDb().organizationAuditEvent.findFirstOrThrow({ where: { organizationId: org.id, type: "oidc-connection-added" } });
    expect(event.actorId).toBe(owner.id);
    expect(event.detail).not.toContain("gamma-secret");
    // The page shows it, in every language's words (here English).
    const shown = await (await send(get("/orgs/gamma", { jar: owner.jar, headers: { Accept: "text/html" } }))).text();
    expect(shown).toContain(`${ORIGIN}/sso/oidc/${conn!.id}/callback`);

    const removed = await formPost(owner.jar, "/orgs/gamma", { intent: "oidc-remove", connectionId: conn!.id });
    expect(removed.headers.get("Location")).toMatch(/done=oidc-removed/);
    expect(await testDb().oidcConnection.count({ where: { organizationId: org.id } })).toBe(0);
    expect(await testDb().organizationAuditEvent.count({ where: { organizationId: org.id, type: "oidc-connection-removed" } })).toBe(1);
  });

  it("refusals: a discovery naming another issuer (clear error), an unverified domain, a plain member, a stale sign-in, another organization's connection", async () => {
    const { owner } = await gamma();
    const fields = { intent: "oidc-add", issuer: idp.issuer, clientId: "gamma-app", clientSecret: "gamma-secret-0123456789", domains: "gamma.test" };
    const wrongIssuer = await jsonPost(owner.jar, "/orgs/gamma", { ...fields, issuer: idp.issuer.replace("127.0.0.1", "localhost") });
    expect(wrongIssuer.status).toBe(400);
    expect(await wrongIssuer.json()).toMatchObject({ error: "DiscoveryFailed", message: expect.stringMatching(/discovery/) });
    const form = await formPost(owner.jar, "/orgs/gamma", { ...fields, issuer: idp.issuer.replace("127.0.0.1", "localhost") });
    expect(form.status).toBe(400);
    expect(await form.text()).toContain("did not answer OpenID Connect discovery");
    const foreign = await jsonPost(owner.jar, "/orgs/gamma", { ...fields, domains: "acme.test" });
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toMatchObject({ error: "InvalidInput" });

    const plain = await member("plain@gamma.test");
    const gammaId = (await testDb().organization.findUniqueOrThrow({ where: { slug: "gamma" } })).id;
    await addMember(gammaId, plain.id, "member");
    expect((await jsonPost(plain.jar, "/orgs/gamma", fields)).status).toBe(403);

    await testDb().session.updateMany({ where: { userId: owner.id }, data: { authenticatedAt: new Date(Date.now() - 11 * 60_000) } });
    const stale = await jsonPost(owner.jar, "/orgs/gamma", fields);
    expect(stale.status).toBe(403);
    expect(await stale.json()).toMatchObject({ error: "ReauthRequired" });
    await testDb().session.updateMany({ where: { userId: owner.id }, data: { authenticatedAt: new Date() } });

    expect((await jsonPost(owner.jar, "/orgs/gamma", { intent: "oidc-remove", connectionId: CONN_A })).status).toBe(404);
    expect(await testDb().oidcConnection.findUnique({ where: { id: CONN_A } })).not.toBeNull();
    expect(await testDb().oidcConnection.count({ where: { organizationId: gammaId } })).toBe(0);
  });
});

describe(`where a connection's server-side fetches may go (server-side request forgery) on ${dbLabel}`, () => {
  it("from the organization page: an https issuer on a loopback, private or internal address is refused before anything is fetched; nothing is stored", async () => {
    const { owner } = await gamma();
    const fields = { intent: "oidc-add", clientId: "gamma-app", clientSecret: "gamma-secret-0123456789", domains: "gamma.test" };
    setOidcHostCheckTestSeam({ resolve: async () => [{ address: "10.20.30.40", family: 4 }] });
    try {
      for (const issuer of ["https://127.0.0.1:4150/realms/x", "https://10.0.0.5/realms/x", "https://[::1]/x", "https://idp.internal.example/realms/x"]) {
        const res = await jsonPost(owner.jar, "/orgs/gamma", { ...fields, issuer });
        expect(res.status, issuer).toBe(400);
        // Said as what it is, with the way an operator adds such a provider.
        expect(await res.json()).toMatchObject({ error: "IssuerNotPublic", message: expect.stringContaining("npm run oidc:connection") });
      }
    } finally {
      setOidcHostCheckTestSeam(null);
    }
    expect(await testDb().oidcConnection.count({ where: { clientId: "gamma-app" } })).toBe(0);
  });

  it("the rule: https to public hosts only; http only to a loopback IdP outside production; the operator's connections may name private and loopback hosts", async () => {
    const production = { production: true };
    const development = { production: false };
    expect(await urlRefusal("http://127.0.0.1:4150/realms/x", false, development)).toBeNull();
    expect(await urlRefusal("http://127.0.0.1:4150/realms/x", false, production)).toMatch(/https/);
    expect(await urlRefusal("http://127.0.0.1:4150/realms/x", true, production)).toBeNull();
    expect(await urlRefusal("http://10.0.0.5/realms/x", true, production)).toMatch(/https/);
    expect(await urlRefusal("https://10.0.0.5/realms/x", false, production)).toMatch(/public/);
    expect(await urlRefusal("https://10.0.0.5/realms/x", true, production)).toBeNull();
    setOidcHostCheckTestSeam({ resolve: async () => [{ address: "93.184.216.34", family: 4 }] });
    try {
      expect(await urlRefusal("https://idp.example.com/realms/x", false, production)).toBeNull();
      // Discovery naming an internal token endpoint is refused too.
      expect(await endpointsRefusal({ token_endpoint: "https://169.254.169.254/latest", jwks_uri: "https://idp.example.com/jwks" }, false, production)).toMatch(/token_endpoint/);
      expect(await endpointsRefusal({ token_endpoint: "https://idp.example.com/token", jwks_uri: "https://idp.example.com/jwks" }, false, production)).toBeNull();
    } finally {
      setOidcHostCheckTestSeam(null);
    }
  });

  it("at sign-in: a page-added connection whose issuer is not public is refused with the generic error, nothing fetched; the operator's flag is stored on its row", async () => {
    await testDb().oidcConnection.update({ where: { id: CONN_A }, data: { issuer: "https://10.0.0.9/realms/x" } });
    const res = await send(get(`/sso/oidc/${CONN_A}/signin?callbackUrl=%2Faccount`, { jar: new CookieJar() }));
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toMatch(/error=Callback/);
    expect((await testDb().oidcConnection.findUniqueOrThrow({ where: { id: CONN_A } })).allowPrivateAddress).toBe(false);
  });
});

describe(`npm run oidc:connection on ${dbLabel}`, () => {
  it("adds (the secret from a file), lists and removes; an unverified domain and a wrong issuer are refused", async () => {
    const dir = await import("node:fs").then((fs) => fs.mkdtempSync(`${(globalThis.process.env.TMPDIR ?? "/tmp").replace(/\/$/, "")}/oidc-cli-`));
    const secretFile = `${dir}/secret`;
    (await import("node:fs")).writeFileSync(secretFile, "cli-secret-0123456789\n");
    const args = ["--org", "acme", "--issuer", idp.issuer, "--client-id", "cli-app", "--client-secret-file", secretFile, "--domains", "acme.test"];
    const added = await runInProcess("scripts/oidc-connection.ts", args);
    expect(added.code).toBe(0);
    const id = /added OpenID Connect connection (\S+)/.exec(added.stdout)![1]!;
    expect(added.stdout).toContain(`/sso/oidc/${id}/callback`);
    // The operator's connection may reach a private or loopback IdP, at sign-in too.
    expect((await testDb().oidcConnection.findUniqueOrThrow({ where: { id } })).allowPrivateAddress).toBe(true);
    const listed = await runInProcess("scripts/oidc-connection.ts", ["--list", "--org", "acme"]);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).not.toContain("cli-secret");
    expect((await runInProcess("scripts/oidc-connection.ts", [...args.slice(0, -1), "beta.test"])).code).not.toBe(0);
    const wrong = await runInProcess("scripts/oidc-connection.ts", [...args.slice(0, 3), "http://127.0.0.1:9", ...args.slice(4)]);
    expect(wrong.code).not.toBe(0);
    expect((await runInProcess("scripts/oidc-connection.ts", ["--remove", id])).code).toBe(0);
    expect(await testDb().oidcConnection.findUnique({ where: { id } })).toBeNull();
    const events = await testDb().organizationAuditEvent.findMany({ where: { organizationId: orgA, type: { in: ["oidc-connection-added", "oidc-connection-removed"] } }, orderBy: { at: "asc" } });
    expect(events.map((e) => [e.type, e.actorId, JSON.parse(e.detail!).source])).toEqual([
      ["oidc-connection-added", null, "cli"],
      ["oidc-connection-removed", null, "cli"],
    ]);
  });
});
