// An organization's requireMfa and session limits (ADR 166): its members and the people of its
// verified domains are held to a second factor as AUTH_REQUIRE_MFA holds everyone (a sign-in
// through its connection counts as its own), and their sessions end at the organization's idle
// and absolute limits when those are shorter than the deployment's — database and jwt alike.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { addConnection } from "../../../app/auth/saml/index.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, get, post } from "../../support/http.ts";
import { configure } from "../email/helpers.ts";
import { b64, IDP_CERT, requestIdOf, signedResponse, spOf, testIdp } from "../saml/idp.ts";
import { finishInBrowser } from "../saml/sp-steps.ts";
import { accountIntent, codeAt, useStepClock } from "../two-factor/helpers.ts";
import { addMember, ORIGIN, send, sessionJson, useApp } from "./helpers.ts";

useApp();
const IDP = "https://idp.acme.test";
const idp = testIdp(IDP);
let acme: string;
let connection: string;

beforeEach(async () => {
  await resetDatabase();
  configure({ AUTH_ORGANIZATIONS: "true" });
  acme = (await testDb().organization.create({ data: { name: "Acme Corp", slug: "acme" } })).id;
  await testDb().organizationDomain.create({
    data: { organizationId: acme, domain: "acme.test", verificationToken: "t", state: "verified", verifiedDomain: "acme.test", verifiedAt: new Date() },
  });
  const added = await addConnection({ organizationId: acme, idpEntityId: IDP, ssoUrl: `${IDP}/sso`, certificates: [IDP_CERT], domains: ["acme.test"] });
  if (!added.ok) throw new Error(added.reason);
  connection = added.id;
});
afterEach(() => {
  vi.useRealTimers();
});

const policy = (data: { requireMfa?: boolean; sessionIdleMinutes?: number | null; sessionAbsoluteMinutes?: number | null }) => testDb().organization.update({ where: { id: acme }, data });

async function throughSaml(email: string) {
  const jar = new CookieJar();
  const start = await send(get(`/sso/${connection}/signin?callbackUrl=%2Forgs`, { jar }), jar);
  const xml = await signedResponse(idp, spOf(ORIGIN, connection), requestIdOf(start.headers.get("Location")!), email);
  const res = await finishInBrowser(await send(post(`/sso/${connection}/acs`, { SAMLResponse: b64(xml) }, { headers: { Origin: IDP, "Sec-Fetch-Site": "cross-site", Accept: "text/html" } })), jar);
  expect(res.headers.get("Location")).not.toContain("error=");
  return jar;
}

/** A page as a JSON client asks for it: its status and, when refused, the code. */
async function orgsPage(jar: CookieJar) {
  const res = await send(get("/orgs", { jar, headers: { Accept: "application/json" } }), jar);
  return { status: res.status, error: res.status === 200 ? null : ((await res.json()) as { error: string }).error };
}

describe(`requireMfa per organization (${dbLabel})`, () => {
  it("a member who signed in with a password alone is held to setting up a second factor, as AUTH_REQUIRE_MFA would; the set-up frees the session", async () => {
    useStepClock();
    const ada = await createUser("ada@example.com");
    await addMember(acme, ada.id, "member");
    await createUser("bob@example.com");
    await policy({ requireMfa: true });
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    expect(await orgsPage(jar)).toEqual({ status: 403, error: "SecondFactorSetupRequired" });
    const browser = await send(get("/orgs", { jar, headers: { Accept: "text/html" } }), jar);
    expect(browser.status).toBe(302);
    expect(browser.headers.get("Location")).toBe(`${ORIGIN}/account`);
    // Not a member and not on the domain: not concerned.
    expect((await orgsPage((await signIn(new CookieJar(), "bob@example.com")).jar)).status).toBe(200);
    // The set-up on /account: this session proved two factors and goes on.
    const started = await accountIntent(jar, { intent: "totp-start" });
    const { totpSetup } = (await started.json()) as { totpSetup: { secret: string } };
    expect((await accountIntent(jar, { intent: "totp-confirm", code: codeAt(totpSetup.secret) })).status).toBe(200);
    expect((await orgsPage(jar)).status).toBe(200);
    // Turned off: a one-factor session of the member is free again.
    await policy({ requireMfa: false });
    await testDb().twoFactorCredential.deleteMany();
    expect((await orgsPage((await signIn(new CookieJar(), "ada@example.com")).jar)).status).toBe(200);
  });

  it("the people of its domain too; a sign-in through its connection counts as the organization's own", async () => {
    await createUser("dora@acme.test");
    await policy({ requireMfa: true });
    const { jar } = await signIn(new CookieJar(), "dora@acme.test");
    expect(await orgsPage(jar)).toEqual({ status: 403, error: "SecondFactorSetupRequired" });
    expect((await orgsPage(await throughSaml("carol@acme.test"))).status).toBe(200);
  });
});

describe(`session limits per organization (${dbLabel})`, () => {
  for (const strategy of ["database", "jwt"] as const) {
    it(`${strategy}: a member's session ends after the idle limit; one in use lives on; a non-member's is untouched`, async () => {
      vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-11-25T12:00:00Z") });
      configure({ AUTH_SESSION_STRATEGY: strategy });
      const ada = await createUser("ada@example.com");
      await addMember(acme, ada.id);
      await createUser("bob@example.com");
      await policy({ sessionIdleMinutes: 10 });
      const idle = (await signIn(new CookieJar(), "ada@example.com")).jar;
      const busy = (await signIn(new CookieJar(), "ada@example.com")).jar;
      const other = (await signIn(new CookieJar(), "bob@example.com")).jar;
      // The session's expiry says the shorter limit.
      const expires = new Date((await sessionJson(idle))!.expires).getTime();
      expect(expires).toBe(Date.now() + 10 * 60_000);
      for (let minute = 4; minute <= 12; minute += 4) {
        vi.setSystemTime(new Date(Date.parse("2026-11-25T12:00:00Z") + minute * 60_000));
        expect(await sessionJson(busy), `minute ${minute}`).not.toBeNull();
      }
      expect(await sessionJson(idle)).toBeNull();
      expect(await sessionJson(other)).not.toBeNull();
    });

    it(`${strategy}: a session of someone on its domain ends at the absolute limit, in use or not`, async () => {
      vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-11-25T12:00:00Z") });
      configure({ AUTH_SESSION_STRATEGY: strategy });
      await createUser("dora@acme.test");
      await policy({ sessionAbsoluteMinutes: 30 });
      const { jar } = await signIn(new CookieJar(), "dora@acme.test");
      for (let minute = 5; minute < 30; minute += 5) {
        vi.setSystemTime(new Date(Date.parse("2026-11-25T12:00:00Z") + minute * 60_000));
        expect(await sessionJson(jar), `minute ${minute}`).not.toBeNull();
      }
      vi.setSystemTime(new Date(Date.parse("2026-11-25T12:00:00Z") + 30 * 60_000));
      expect(await sessionJson(jar)).toBeNull();
    });
  }
});
