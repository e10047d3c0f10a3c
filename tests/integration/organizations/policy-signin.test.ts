// An organization's requireSso is what every path enforces (ADR 165): for an address on its
// verified domain, a password, an e-mail link or code (sent or used), a forgotten-password
// request, a reset link, a passkey, another OAuth provider, a sign-in that would go on to its
// second factor and a re-authentication are refused with the organization's sign-in named and
// offered; its SAML connection signs in; a break-glass owner gets through, audited and e-mailed to
// every owner; turning the policy on ends the sessions that did not come through the connection.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { addConnection } from "../../../app/auth/saml/index.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import * as callbackRoute from "../../../app/routes/auth/callback.ts";
import * as optionsRoute from "../../../app/routes/auth/webauthn-options.ts";
import { createUser, PASSWORD, signIn } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";
import { startTestIdp, type TestIdp } from "../../support/idp.ts";
import { signInThroughIdp } from "../../support/oauth-flow.ts";
import { SoftwareAuthenticator } from "../../support/passkey-authenticator.ts";
import { reauthenticate, reauthPage } from "../../support/reauth.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { configure, openLink, requestLink, useSmtpSink } from "../email/helpers.ts";
import { askReset, postReset, signUp } from "../passwords/helpers.ts";
import { b64, IDP_CERT, requestIdOf, signedResponse, spOf, testIdp } from "../saml/idp.ts";
import { finishInBrowser } from "../saml/sp-steps.ts";
import { codeAt, firstFactor, enrolled, submitCode, useStepClock } from "../two-factor/helpers.ts";
import { jsonPost, ORIGIN, send, useApp, verifiedUser } from "./helpers.ts";

useApp();
const smtp = useSmtpSink();
const IDP = "https://idp.acme.test";
const idp = testIdp(IDP);

let acme: string;
let connection: string;

beforeEach(async () => {
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

async function requireSso(breakGlass: string[] = []) {
  await testDb().organization.update({ where: { id: acme }, data: { requireSso: true, breakGlassOwners: breakGlass.join(" ") } });
}

const REFUSED = `${ORIGIN}/auth/signin?error=SsoRequired&domain=acme.test`;

function refused(res: Response) {
  expect(res.status).toBe(302);
  expect(res.headers.get("Location")).toBe(REFUSED);
  expect(res.headers.getSetCookie().some((c) => /session-token=[^;]/.test(c))).toBe(false);
}

async function sessionsOf(email: string) {
  // A jwt session that ended keeps its row, marked revoked.
  return testDb().session.count({ where: { user: { email }, revokedAt: null } });
}

/** The SAML connection's sign-in, as the IdP answers it: the ACS response. */
async function throughSaml(email: string, jar = new CookieJar()) {
  const start = await send(get(`/sso/${connection}/signin?callbackUrl=%2Faccount`, { jar }), jar);
  const xml = await signedResponse(idp, spOf(ORIGIN, connection), requestIdOf(start.headers.get("Location")!), email);
  const res = await finishInBrowser(await send(post(`/sso/${connection}/acs`, { SAMLResponse: b64(xml) }, { headers: { Origin: IDP, "Sec-Fetch-Site": "cross-site", Accept: "text/html" } })), jar);
  return { res, jar };
}

async function passkeyOptions(jar: CookieJar, query = "") {
  const res = await callRoute(optionsRoute.loader, get(`/auth/webauthn-options/passkey${query}`, { jar }), { provider: "passkey" });
  jar.apply(res);
  return (await res.json()) as { options: never };
}

describe(`requireSso on every path (${dbLabel})`, () => {
  it("a password: refused after it is proved, naming the domain; the page names the organization and offers its sign-in; nothing else changes", async () => {
    await createUser("ada@acme.test");
    await createUser("bob@elsewhere.test");
    await requireSso();
    refused((await signIn(new CookieJar(), "ada@acme.test")).res);
    expect(await sessionsOf("ada@acme.test")).toBe(0);
    // A wrong password, and an unknown address, get the very same refusal: the answer never says
    // whether the password was right (ADR 165 amended).
    refused((await signIn(new CookieJar(), "ada@acme.test", "not the password")).res);
    refused((await signIn(new CookieJar(), "nobody@acme.test", "not the password")).res);
    refused((await signIn(new CookieJar(), "nobody@acme.test")).res);
    // JSON clients read the same refusal as {url}.
    const jar = new CookieJar();
    const csrfToken = await fetchCsrf(jar);
    const json = await callRoute(callbackRoute.action, post("/auth/callback/credentials", { csrfToken, email: "ada@acme.test", password: PASSWORD, json: "true" }, { jar }), { provider: "credentials" });
    expect(await json.json()).toEqual({ url: REFUSED });
    // The page: "<Org> signs you in through its company sign-in", and the way there.
    const page = await send(get("/auth/signin?error=SsoRequired&domain=acme.test", { headers: { Accept: "text/html" } }));
    const html = await page.text();
    expect(html).toContain("Acme Corp signs you in through its company sign-in.");
    expect(html).toMatch(new RegExp(`href="/sso/${connection}/signin\\?callbackUrl=[^"]*"`));
    // Another domain's people are not concerned.
    expect((await signIn(new CookieJar(), "bob@elsewhere.test")).res).toHaveSessionCookie();
  });

  it("the e-mail link: nothing sent; a link sent before the policy is refused when used", async () => {
    await createUser("ada@acme.test");
    const before = await requestLink(new CookieJar(), { email: "ada@acme.test" });
    expect(before.status).toBe(302);
    const message = (await smtp.sink.waitFor(1))[0]!;
    await requireSso();
    await mailSenderIdle();
    const tokens = await testDb().verificationToken.count();
    refused(await requestLink(new CookieJar(), { email: "nobody@acme.test" }));
    refused(await requestLink(new CookieJar(), { email: "ada@acme.test" }));
    expect(await testDb().verificationToken.count()).toBe(tokens);
    await mailSenderIdle();
    expect(smtp.sink.messages).toHaveLength(1);
    refused(await openLink(linkIn(message)));
    expect(await sessionsOf("ada@acme.test")).toBe(0);
  });

  it("a forgotten password: no reset is sent; a reset link from before is refused and the password stays", async () => {
    const user = await createUser("ada@acme.test");
    const hash = (await testDb().password.findUniqueOrThrow({ where: { userId: user.id } })).hash;
    await askReset(new CookieJar(), "ada@acme.test");
    const message = (await smtp.sink.waitFor(1))[0]!;
    await requireSso();
    refused(await askReset(new CookieJar(), "ada@acme.test"));
    refused(await askReset(new CookieJar(), "nobody@acme.test"));
    const link = linkIn(message);
    const jar = new CookieJar();
    const res = await postReset(jar, { token: link.searchParams.get("token")!, email: "ada@acme.test", password: "velvet lantern orbit" });
    refused(res);
    expect((await testDb().password.findUniqueOrThrow({ where: { userId: user.id } })).hash).toBe(hash);
    expect(await sessionsOf("ada@acme.test")).toBe(0);
  });

  it("a sign-up on the domain: refused before anything is sent or stored", async () => {
    configure({ AUTH_SIGNUP: "true" });
    await requireSso();
    refused(await signUp(new CookieJar(), { email: "new@acme.test", password: "velvet lantern orbit", name: "New" }));
    expect(await testDb().verificationToken.count()).toBe(0);
    await mailSenderIdle();
    expect(smtp.sink.messages).toHaveLength(0);
  });

  it("a passkey alone: refused", async () => {
    await createUser("ada@acme.test");
    const { jar } = await signIn(new CookieJar(), "ada@acme.test");
    const authenticator = new SoftwareAuthenticator();
    const creation = await passkeyOptions(jar, "?action=register");
    const registered = await callRoute(callbackRoute.action, post("/auth/callback/passkey", { csrfToken: await fetchCsrf(jar), action: "register", data: JSON.stringify(authenticator.register(creation.options)) }, { jar }), { provider: "passkey" });
    expect(registered).toHaveRedirect("/account");
    await requireSso();
    const fresh = new CookieJar();
    const request = await passkeyOptions(fresh);
    const res = await callRoute(
      callbackRoute.action,
      post("/auth/callback/passkey", { csrfToken: await fetchCsrf(fresh), action: "authenticate", data: JSON.stringify(authenticator.authenticate(request.options)), callbackUrl: "/account" }, { jar: fresh }),
      { provider: "passkey" },
    );
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("Location")!).searchParams.get("error")).toBe("SsoRequired");
    expect(res).not.toHaveSessionCookie();
  });

  it("a sign-in that would go on to its second factor is refused before it: no pending sign-in", async () => {
    useStepClock();
    await createUser("ada@acme.test");
    await enrolled("ada@acme.test");
    await requireSso();
    const jar = new CookieJar();
    const res = await firstFactor(jar, "ada@acme.test");
    refused(res);
    expect(res.headers.getSetCookie().some((c) => /two-factor=[^;]/.test(c))).toBe(false);
  });

  it("a policy turned on between the two factors: the code no longer signs in", async () => {
    useStepClock();
    await createUser("ada@acme.test");
    const { secret } = await enrolled("ada@acme.test");
    const jar = new CookieJar();
    const first = await firstFactor(jar, "ada@acme.test");
    expect(first.headers.get("Location")).toBe(`${ORIGIN}/auth/two-factor`);
    await requireSso();
    refused(await submitCode(jar, codeAt(secret)));
    expect(await sessionsOf("ada@acme.test")).toBe(1); // the enrolment's own session only
  });

  it("a re-authentication with the password of a session from before: refused, the session not renewed", async () => {
    await createUser("ada@acme.test");
    const { jar } = await signIn(new CookieJar(), "ada@acme.test");
    // Written directly: the page's save would have ended this session (see below).
    await requireSso();
    const res = await reauthenticate(jar, { password: PASSWORD });
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe(`${ORIGIN}/auth/reauth?callbackUrl=%2Faccount&error=SsoRequired`);
    const page = await reauthPage(jar, "/account", "&error=SsoRequired");
    expect(((await page.json()) as { error: string }).error).toBe("Your organization signs you in through its company sign-in.");
    expect((await testDb().session.findFirstOrThrow({ where: { user: { email: "ada@acme.test" } } })).method).toBe("credentials");
  });

  it("the organization's SAML connection signs in; with the policy, a new person arrives just in time", async () => {
    await requireSso();
    const { res } = await throughSaml("carol@acme.test");
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).not.toContain("error=");
    expect(res.headers.getSetCookie().some((c) => /session-token=[^;]/.test(c))).toBe(true);
  });

  it("a break-glass owner's wrong password gets the domain's SsoRequired like anyone's; the right one signs in", async () => {
    const owner = await verifiedUser("owner@acme.test");
    await testDb().membership.create({ data: { organizationId: acme, userId: owner.id, role: "owner" } });
    await requireSso([owner.id]);
    refused((await signIn(new CookieJar(), "owner@acme.test", "not the password")).res);
    expect((await signIn(new CookieJar(), "owner@acme.test")).res).toHaveSessionCookie();
    // No longer an owner: the right password is refused the same way.
    await testDb().membership.updateMany({ where: { userId: owner.id }, data: { role: "admin" } });
    refused((await signIn(new CookieJar(), "owner@acme.test")).res);
  });

  it("a break-glass owner signs in with the password: recorded in the organization's log and e-mailed to every owner", async () => {
    const owner = await verifiedUser("owner@acme.test");
    const other = await verifiedUser("second@elsewhere.test");
    await testDb().membership.createMany({ data: [{ organizationId: acme, userId: owner.id, role: "owner" }, { organizationId: acme, userId: other.id, role: "owner" }] });
    await requireSso([owner.id]);
    await mailSenderIdle();
    smtp.sink.clear();
    const { res } = await signIn(new CookieJar(), "owner@acme.test");
    expect(res).toHaveSessionCookie();
    const event = await testDb().organizationAuditEvent.findFirstOrThrow({ where: { organizationId: acme, type: "break-glass-used" } });
    expect(event.actorId).toBe(owner.id);
    const mails = await smtp.sink.waitFor(2);
    expect(mails.flatMap((m) => m.envelope.to).sort()).toEqual(["owner@acme.test", "second@elsewhere.test"]);
    expect(mails[0]!.text).toContain("Acme Corp");
    // No longer an owner: no longer exempt.
    await testDb().membership.updateMany({ where: { userId: owner.id }, data: { role: "admin" } });
    refused((await signIn(new CookieJar(), "owner@acme.test")).res);
  });

  it("turning it on from the page ends the password sessions of the domain's people, not the break-glass owner's nor those through the connection", async () => {
    const owner = await verifiedUser("owner@acme.test");
    await testDb().membership.create({ data: { organizationId: acme, userId: owner.id, role: "owner" } });
    await createUser("ada@acme.test");
    await createUser("bob@elsewhere.test");
    const ownerJar = (await signIn(new CookieJar(), "owner@acme.test")).jar;
    await signIn(new CookieJar(), "ada@acme.test");
    await signIn(new CookieJar(), "bob@elsewhere.test");
    await throughSaml("carol@acme.test");
    const res = await jsonPost(ownerJar, "/orgs/acme", { intent: "policy", requireSso: "on", [`breakGlass:${owner.id}`]: "on" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, sessionsEnded: 1 });
    expect(await sessionsOf("ada@acme.test")).toBe(0);
    expect(await sessionsOf("owner@acme.test")).toBe(1);
    expect(await sessionsOf("carol@acme.test")).toBe(1);
    expect(await sessionsOf("bob@elsewhere.test")).toBe(1);
  });
});

describe(`requireSso after a break-glass owner stops being an owner (${dbLabel})`, () => {
  /** Two break-glass owners on the domain, each signed in with the password; a SCIM token made by the first works. */
  async function twoBreakGlassOwners() {
    const first = await verifiedUser("first@acme.test");
    const second = await verifiedUser("second@acme.test");
    await testDb().membership.createMany({ data: [{ organizationId: acme, userId: first.id, role: "owner" }, { organizationId: acme, userId: second.id, role: "owner" }] });
    await requireSso([first.id, second.id]);
    const firstJar = (await signIn(new CookieJar(), "first@acme.test")).jar;
    const secondJar = (await signIn(new CookieJar(), "second@acme.test")).jar;
    expect(await sessionsOf("first@acme.test")).toBe(1);
    const membership = await testDb().membership.findUniqueOrThrow({ where: { organizationId_userId: { organizationId: acme, userId: first.id } } });
    return { first, second, firstJar, secondJar, membershipId: membership.id };
  }
  const breakGlass = async () => (await testDb().organization.findUniqueOrThrow({ where: { id: acme } })).breakGlassOwners.split(" ").filter(Boolean);

  for (const strategy of ["database", "jwt"] as const) {
    it(`demoted to admin (${strategy} sessions): dropped from the break-glass owners, the password session ends and can no longer mint a SCIM token`, async () => {
      configure({ AUTH_ORGANIZATIONS: "true", AUTH_SESSION_STRATEGY: strategy });
      const { first, second, firstJar, secondJar, membershipId } = await twoBreakGlassOwners();
      expect((await jsonPost(secondJar, "/orgs/acme", { intent: "role", membershipId, role: "admin" })).status).toBe(200);
      expect(await breakGlass()).toEqual([second.id]);
      expect(await sessionsOf("first@acme.test")).toBe(0);
      expect(await sessionsOf("second@acme.test")).toBe(1);
      expect((await jsonPost(firstJar, "/orgs/acme", { intent: "scim-token-create", name: "Mine" })).status).not.toBe(200);
      expect(await testDb().scimToken.count()).toBe(0);
      const events = await testDb().organizationAuditEvent.findMany({ where: { organizationId: acme, type: { in: ["policy-changed", "sso-sessions-ended"] } }, orderBy: { at: "asc" } });
      expect(events.map((e) => e.type)).toEqual(["policy-changed", "sso-sessions-ended"]);
      expect(JSON.parse(events[1]!.detail!)).toMatchObject({ userId: first.id, sessions: 1, because: "owner-role-lost" });
    });
  }

  it("removed, or leaving: dropped from the break-glass owners and the password session ends", async () => {
    const { second, firstJar, secondJar, membershipId } = await twoBreakGlassOwners();
    expect((await jsonPost(secondJar, "/orgs/acme", { intent: "remove", membershipId })).status).toBe(200);
    expect(await breakGlass()).toEqual([second.id]);
    expect(await sessionsOf("first@acme.test")).toBe(0);
    expect((await jsonPost(firstJar, "/orgs/acme", { intent: "scim-token-create", name: "Mine" })).status).not.toBe(200);

    const third = await verifiedUser("third@acme.test");
    await testDb().membership.create({ data: { organizationId: acme, userId: third.id, role: "owner" } });
    await requireSso([second.id, third.id]);
    const thirdJar = (await signIn(new CookieJar(), "third@acme.test")).jar;
    expect((await jsonPost(thirdJar, "/orgs/acme", { intent: "leave" })).status).toBe(200);
    expect(await breakGlass()).toEqual([second.id]);
    expect(await sessionsOf("third@acme.test")).toBe(0);
    expect(await sessionsOf("second@acme.test")).toBe(1);
  });

  it("a demoted owner off the organization's domains keeps their sessions (requireSso does not govern them); without requireSso nothing ends", async () => {
    const outsider = await verifiedUser("boss@elsewhere.test");
    const second = await verifiedUser("second@acme.test");
    await testDb().membership.createMany({ data: [{ organizationId: acme, userId: outsider.id, role: "owner" }, { organizationId: acme, userId: second.id, role: "owner" }] });
    await requireSso([outsider.id, second.id]);
    await signIn(new CookieJar(), "boss@elsewhere.test");
    const secondJar = (await signIn(new CookieJar(), "second@acme.test")).jar;
    const m = await testDb().membership.findUniqueOrThrow({ where: { organizationId_userId: { organizationId: acme, userId: outsider.id } } });
    expect((await jsonPost(secondJar, "/orgs/acme", { intent: "role", membershipId: m.id, role: "member" })).status).toBe(200);
    expect(await breakGlass()).toEqual([second.id]);
    expect(await sessionsOf("boss@elsewhere.test")).toBe(1);
  });
});

describe(`requireSso and another OAuth provider (${dbLabel})`, () => {
  let oauth: TestIdp;
  beforeAll(async () => {
    oauth = await startTestIdp({ users: [{ sub: "idp-dora", email: "dora@acme.test", emailVerified: true, name: "Dora", password: "dora-password" }] });
  });
  afterAll(() => oauth?.stop());

  it("a sign-in through another provider is refused", async () => {
    oauth.configure();
    configure({ AUTH_ORGANIZATIONS: "true" });
    await requireSso();
    const { res } = await signInThroughIdp(new CookieJar(), { email: "dora@acme.test", password: "dora-password" });
    refused(res);
    expect(await sessionsOf("dora@acme.test")).toBe(0);
  });
});

/** The token of the invitation e-mailed to `address` (other mail, such as security notices, aside). */
async function invitationTokenFor(address: string): Promise<string> {
  for (let n = 1; ; n++) {
    const found = (await smtp.sink.waitFor(n)).find((m) => m.envelope.to.includes(address) && linkIn(m).pathname === "/orgs/invitation");
    if (found) return linkIn(found).searchParams.get("token")!;
  }
}

describe(`requireSso and invitations (${dbLabel})`, () => {
  it("accepting an invitation from a session that did not come through the connection is refused, naming the organization; through it, accepted", async () => {
    const inviter = await verifiedUser("inviter@elsewhere.test");
    const beta = await testDb().organization.create({ data: { name: "Beta", slug: "beta" } });
    await testDb().membership.create({ data: { organizationId: beta.id, userId: inviter.id, role: "owner" } });
    const inviterJar = (await signIn(new CookieJar(), "inviter@elsewhere.test")).jar;
    const ada = await verifiedUser("ada@acme.test");
    const passwordJar = (await signIn(new CookieJar(), "ada@acme.test")).jar;
    await requireSso();
    expect((await jsonPost(inviterJar, "/orgs/beta", { intent: "invite", email: "ada@acme.test", role: "member" })).status).toBe(200);
    const token = await invitationTokenFor("ada@acme.test");
    const refusedAnswer = await jsonPost(passwordJar, "/orgs/invitation", { token });
    expect(refusedAnswer.status).toBe(403);
    expect(await refusedAnswer.json()).toEqual({ error: "SsoRequired", message: "Acme Corp signs you in through its company sign-in." });
    expect(await testDb().membership.count({ where: { organizationId: beta.id, userId: ada.id } })).toBe(0);
    // Someone of the domain who came through the connection joins.
    const { jar } = await throughSaml("carol@acme.test");
    expect((await jsonPost(inviterJar, "/orgs/beta", { intent: "invite", email: "carol@acme.test", role: "member" })).status).toBe(200);
    const carolToken = await invitationTokenFor("carol@acme.test");
    expect((await jsonPost(jar, "/orgs/invitation", { token: carolToken })).status).toBe(200);
  });
});
