// SAML connections (docs/features/saml.md, ADR 153–155) against an identity provider in this
// process (samlify): a valid response signs in and provisions the person, and every mutation of it
// an attacker could make is refused — the signature-wrapping family, comments and processing
// instructions in the NameID, another key with its certificate in KeyInfo, a second Reference,
// SHA-1, replays (also on a second module load sharing the database), another connection's ACS,
// the wrong audience, recipient, destination and issuer, times just outside the 60 s skew, and an
// unsolicited response. The ACS is posted cross-site with no cookie at all.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { runInProcess } from "../../support/cli.ts";
import { addConnection } from "../../../app/auth/saml/index.ts";
import * as account from "../../../app/routes/account.tsx";
import { callRoute, CookieJar, get, post } from "../../support/http.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { configure } from "../email/helpers.ts";
import { addMember, createOrg, formPost, jsonGet, jsonPost, member, ORIGIN, send, useApp } from "../organizations/helpers.ts";
import { b64, RETIRED_CERT, OTHER_CERT, OTHER_KEY, requestIdOf, resign, signedResponse, spOf, testIdp, unsigned, IDP_CERT } from "./idp.ts";
import { finishInBrowser, samlStart } from "./sp-steps.ts";

useApp();

const IDP_A = "https://idp.acme.test";
const IDP_B = "https://idp.beta.test";
const idpA = testIdp(IDP_A);
const idpB = testIdp(IDP_B);

let connA: string;
let connB: string;
let orgA: string;

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
  orgA = await org("acme", "acme.test");
  const orgB = await org("beta", "beta.test");
  const a = await addConnection({ organizationId: orgA, idpEntityId: IDP_A, ssoUrl: `${IDP_A}/sso`, certificates: [RETIRED_CERT, IDP_CERT], domains: ["acme.test"] });
  const b = await addConnection({ organizationId: orgB, idpEntityId: IDP_B, ssoUrl: `${IDP_B}/sso`, certificates: [IDP_CERT], domains: ["beta.test"] });
  if (!a.ok || !b.ok) throw new Error("connections");
  connA = a.id;
  connB = b.id;
});

/** SP-initiated start (optionally signed in): the AuthnRequest id the IdP answers. */
async function start(connection: string, jar?: CookieJar, callbackUrl = "/account"): Promise<string> {
  const { res } = await samlStart(connection, jar, callbackUrl);
  expect(res.status).toBe(302);
  const location = res.headers.get("Location")!;
  expect(location.startsWith(`${IDP_A}/sso`) || location.startsWith(`${IDP_B}/sso`)).toBe(true);
  return requestIdOf(location);
}

/** The IdP's cross-site form POST to the ACS: no cookie, the IdP's Origin. */
function acsPost(connection: string, xml: string, extra: Record<string, string> = {}) {
  return send(
    post(`/sso/${connection}/acs`, { SAMLResponse: b64(xml), ...extra }, { headers: { Origin: "https://idp.acme.test", "Sec-Fetch-Site": "cross-site", Accept: "text/html" } }),
  );
}

/** The ACS POST, then the browser that started the sign-in following its 303 to the finish step. */
async function acs(connection: string, xml: string, extra: Record<string, string> = {}) {
  return finishInBrowser(await acsPost(connection, xml, extra));
}

const browsers = new Map<string, CookieJar>();
/** The jar of the browser that started the request `xml` answers. */
const browserOf = (xml: string) => browsers.get(/InResponseTo="([^"]+)"/.exec(xml)![1]!)!;

async function validFor(connection = connA, email = "ada@acme.test") {
  const jar = new CookieJar();
  const id = await start(connection, jar);
  browsers.set(id, jar);
  return { id, xml: await signedResponse(connection === connA ? idpA : idpB, spOf(ORIGIN, connection), id, email) };
}

async function expectRefused(res: Response) {
  expect(res.status).toBe(302);
  expect(res.headers.get("Location")).toMatch(/error=/);
  expect(res.headers.getSetCookie().some((c) => /session-token=[^;]/.test(c))).toBe(false);
  expect(await testDb().session.count()).toBe(0);
}

function signedIn(res: Response) {
  expect(res.status).toBe(302);
  expect(res.headers.get("Location")).not.toMatch(/error=/);
  expect(res.headers.getSetCookie().some((c) => /session-token=[^;]/.test(c))).toBe(true);
}

describe(`SAML connections on ${dbLabel}`, () => {
  it("metadata names the entity id and the ACS of the connection; unknown ids and organizations off are 404", async () => {
    const res = await send(get(`/sso/${connA}/metadata`));
    expect(res.status).toBe(200);
    const xml = await res.text();
    expect(xml).toContain(`entityID="${ORIGIN}/sso/${connA}/metadata"`);
    expect(xml).toContain(`Location="${ORIGIN}/sso/${connA}/acs"`);
    expect((await send(get(`/sso/nope/metadata`))).status).toBe(404);
    configure({ AUTH_ORGANIZATIONS: undefined });
    expect((await send(get(`/sso/${connA}/metadata`))).status).toBe(404);
  });

  it("a real InResponseTo, cross-site, without any cookie: account, membership and session just in time, back to the callbackUrl", async () => {
    const { xml } = await validFor();
    const res = await acs(connA, xml);
    signedIn(res);
    expect(res.headers.get("Location")).toBe(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    const user = await testDb().user.findUniqueOrThrow({ where: { email: "ada@acme.test" } });
    expect(user.emailVerified).not.toBeNull();
    expect(await testDb().membership.findFirst({ where: { userId: user.id, organizationId: orgA } })).toMatchObject({ role: "member" });
    expect(await testDb().samlIdentity.findFirst({ where: { connectionId: connA, subject: "ada@acme.test" } })).toMatchObject({ userId: user.id });
    const session = await testDb().session.findFirstOrThrow({ where: { userId: user.id } });
    expect(session.method).toBe("saml");
    // The session works, and the account page names its method by the organization (ADR 167).
    const jar = new CookieJar();
    jar.apply(res);
    const page = await callRoute(account.loader, get("/account", { jar }));
    expect(page.status).toBe(200);
    const { sessions } = (await page.json()) as { sessions: { method: string | null; methodType: string | null }[] };
    expect(sessions.map((s) => [s.method, s.methodType])).toEqual([["ACME", "organization"]]);
    // The request is used up: the same request id cannot be answered twice.
    expect(await testDb().samlRequest.count()).toBe(0);
  });

  describe("login CSRF: an answer signs in only the browser that started its request (ADR 154, amended)", () => {
    it("the ACS signs nobody in: a 303 to the finish step, whose GET carries the binding cookie set at the start", async () => {
      const { id, jar } = await samlStart(connA);
      const binding = jar.get("authjs.saml-binding");
      expect(binding).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const posted = await acsPost(connA, await signedResponse(idpA, spOf(ORIGIN, connA), id, "ada@acme.test"));
      expect(posted.status).toBe(303);
      expect(posted.headers.get("Location")).toMatch(new RegExp(`^${ORIGIN}/sso/${connA}/finish\\?ticket=`));
      expect(posted.headers.getSetCookie()).toEqual([]);
      expect(await testDb().session.count()).toBe(0);
      expect(await testDb().user.count()).toBe(0);
      const done = await finishInBrowser(posted, jar);
      signedIn(done);
      // The binding cookie is cleared once used; the ticket is used up.
      expect(done.headers.getSetCookie().some((c) => /^authjs\.saml-binding=;/.test(c))).toBe(true);
      expect(await testDb().samlTicket.count()).toBe(0);
      await expectRefused(await finishInBrowser(posted, jar).then(async (r) => (await testDb().session.deleteMany(), r)));
    });

    it("the attacker's own request, answered for his account and posted by the victim's browser, signs the victim in as nobody", async () => {
      // The attacker starts the sign-in himself (no cookies of the victim) and has his IdP answer it.
      const attacker = await samlStart(connA, new CookieJar());
      const xml = await signedResponse(idpA, spOf(ORIGIN, connA), attacker.id, "mallory@acme.test");
      // The victim's browser: its own cookies (a binding cookie of an earlier sign-in of its own too).
      const victim = new CookieJar();
      await samlStart(connA, victim);
      const posted = await acsPost(connA, xml);
      await expectRefused(await finishInBrowser(posted, victim));
      expect(await testDb().user.count()).toBe(0);
      // The ticket was taken: the attacker cannot finish it either, once the victim's browser used it.
      await expectRefused(await finishInBrowser(posted, attacker.jar));
    });

    it("the attacker's ticket opened by a victim with no binding cookie at all is refused; a forged or unknown ticket too", async () => {
      const attacker = await samlStart(connA, new CookieJar());
      const posted = await acsPost(connA, await signedResponse(idpA, spOf(ORIGIN, connA), attacker.id, "mallory@acme.test"));
      await expectRefused(await finishInBrowser(posted, new CookieJar()));
      await expectRefused(await send(get(`/sso/${connA}/finish?ticket=${"A".repeat(43)}`, { jar: attacker.jar })));
      await expectRefused(await send(get(`/sso/${connA}/finish`, { jar: attacker.jar })));
    });

    it("a ticket of connection A opened at connection B's finish step is refused", async () => {
      const { id, jar } = await samlStart(connA);
      const posted = await acsPost(connA, await signedResponse(idpA, spOf(ORIGIN, connA), id, "ada@acme.test"));
      const ticket = new URL(posted.headers.get("Location")!).search;
      await expectRefused(await send(get(`/sso/${connB}/finish${ticket}`, { jar })));
    });

    it("a ticket older than two minutes is refused", async () => {
      const { id, jar } = await samlStart(connA);
      const posted = await acsPost(connA, await signedResponse(idpA, spOf(ORIGIN, connA), id, "ada@acme.test"));
      await testDb().samlTicket.updateMany({ data: { expires: new Date(Date.now() - 1000) } });
      await expectRefused(await finishInBrowser(posted, jar));
    });
  });

  it("with jwt sessions too: the ACS signs in, and the session is recorded with method saml", async () => {
    configure({ AUTH_SESSION_STRATEGY: "jwt" });
    const { xml } = await validFor();
    const res = await acs(connA, xml);
    signedIn(res);
    expect(await testDb().session.findFirstOrThrow({ where: { kind: "jwt" } })).toMatchObject({ method: "saml" });
  });

  it("a replay of the same response is refused, on this instance and on a second module load sharing the database", async () => {
    const { xml } = await validFor();
    signedIn(await acs(connA, xml));
    await testDb().session.deleteMany();
    await expectRefused(await acs(connA, xml));
    // A second instance: every module loaded again, the same database.
    vi.resetModules();
    const fresh = await import("../../../app/auth/saml/sp.server.ts");
    const { authRequest } = await import("../../../app/auth/core/request.server.ts");
    const request = post(`/sso/${connA}/acs`, { SAMLResponse: b64(xml) }, { headers: { Origin: IDP_A, "Sec-Fetch-Site": "cross-site" } });
    const ar = authRequest(request);
    const connection = await fresh.connectionFor(ar, connA);
    await expectRefused(await fresh.consumeAssertion(ar, connection!, b64(xml), undefined));
  });

  it("a request started on one instance is answered on another (the request id lives in the database)", async () => {
    const { xml } = await validFor();
    vi.resetModules();
    const fresh = await import("../../../app/auth/saml/sp.server.ts");
    const { authRequest } = await import("../../../app/auth/core/request.server.ts");
    const ar = authRequest(post(`/sso/${connA}/acs`, { SAMLResponse: b64(xml) }, { headers: { Origin: IDP_A } }));
    const posted = await fresh.consumeAssertion(ar, (await fresh.connectionFor(ar, connA))!, b64(xml), undefined);
    // The finish step back on the first (the app's own module graph): the ticket lives in the
    // database too. Not a third graph: a graph left behind by a reset may still be closing its pool.
    const finish = new URL(posted.headers.get("Location")!);
    signedIn(await send(get(`${finish.pathname}${finish.search}`, { jar: browserOf(xml) })));
  });

  describe("refused mutations of a validly signed response", () => {
    const cases: [string, (xml: string, id: string) => string | Promise<string>][] = [
      ["the assertion's signature removed", (xml) => unsigned(xml)],
      ["a second, unsigned assertion after the signed one", (xml) => xml.replace(/(<\/saml:Assertion>)/, `$1${unsigned(xml).match(/<saml:Assertion[\s\S]*<\/saml:Assertion>/)![0].replace(/ada@acme\.test/g, "eve@acme.test").replace(/ID="[^"]+"/, 'ID="_evil"')}`)],
      ["an unsigned assertion first, the signed one hidden in Extensions", (xml) => {
        const signed = xml.match(/<saml:Assertion[\s\S]*<\/saml:Assertion>/)![0];
        const evil = unsigned(signed).replace(/ada@acme\.test/g, "eve@acme.test");
        return xml.replace(signed, evil).replace(/(<samlp:Status>)/, `<samlp:Extensions>${signed}</samlp:Extensions>$1`);
      }],
      ["the signature moved to the Response, pointing at a wrapped copy", (xml) => {
        const signature = xml.match(/<ds:Signature[\s\S]*?<\/ds:Signature>/)![0];
        return unsigned(xml).replace(/(<samlp:Status>)/, `${signature}$1`).replace(/ada@acme\.test/g, "eve@acme.test");
      }],
      ["duplicate IDs (an evil assertion with the signed one's ID, before it)", (xml) => {
        const signed = xml.match(/<saml:Assertion[\s\S]*<\/saml:Assertion>/)![0];
        const evil = unsigned(signed).replace(/ada@acme\.test/g, "eve@acme.test");
        return xml.replace(signed, `${evil}${signed}`);
      }],
      ["a comment inside the NameID", (xml) => xml.replace(">ada@acme.test<", ">ada@acme.test<!-- -->.evil.test<")],
      ["a comment inside the NameID, re-signed by the IdP's own key", (xml) => resign(xml, { edit: (x) => x.replace(">ada@acme.test<", ">ada<!---->@acme.test<") })],
      ["a processing instruction inside the NameID, re-signed", (xml) => resign(xml, { edit: (x) => x.replace(">ada@acme.test<", ">ada<?pi x?>@acme.test<") })],
      ["re-signed with another key whose certificate is in KeyInfo", (xml) => resign(xml, { key: OTHER_KEY, cert: OTHER_CERT, edit: (x) => x.replace(/ada@acme\.test/g, "eve@acme.test") })],
      ["a second Reference in the signature", (xml) => resign(xml, { secondReference: true })],
      ["SHA-1 signature and digest", (xml) => resign(xml, { sha1: true })],
      ["the wrong audience", (xml) => resign(xml, { edit: (x) => x.replace(/<saml:Audience>[^<]*</, "<saml:Audience>https://other.test/sp<") })],
      ["the wrong recipient", (xml) => resign(xml, { edit: (x) => x.replace(/Recipient="[^"]*"/, 'Recipient="https://other.test/acs"') })],
      ["the wrong destination", (xml) => xml.replace(/Destination="[^"]*"/, 'Destination="https://other.test/acs"')],
      ["the wrong issuer (response and assertion)", (xml) => resign(xml, { edit: (x) => x.replaceAll(`>${IDP_A}<`, ">https://evil.test<") })],
      ["an InResponseTo no request of ours has", (xml, id) => resign(xml.replaceAll(id, "_forged"), { edit: (x) => x })],
      ["a DOCTYPE", (xml) => `<!DOCTYPE r [<!ENTITY e "x">]>${xml}`],
      ["more than 256 KB", (xml) => xml.replace("<samlp:Status>", `<samlp:Extensions><x>${"a".repeat(257 * 1024)}</x></samlp:Extensions><samlp:Status>`)],
    ];
    for (const [name, mutate] of cases) {
      it(name, async () => {
        const { xml, id } = await validFor();
        await expectRefused(await acs(connA, await mutate(xml, id)));
        expect(await testDb().user.count()).toBe(0);
      });
    }
  });

  describe("times around the 60 s skew", () => {
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();
    const shift = (x: string, attr: "NotOnOrAfter" | "NotBefore", ms: number) => x.replace(new RegExp(`${attr}="[^"]*"`, "g"), `${attr}="${at(ms)}"`);
    it("NotOnOrAfter 61 s ago is refused", async () => {
      const { xml } = await validFor();
      await expectRefused(await acs(connA, resign(xml, { edit: (x) => shift(x, "NotOnOrAfter", -61_000) })));
    });
    it("NotBefore 61 s ahead is refused", async () => {
      const { xml } = await validFor();
      await expectRefused(await acs(connA, resign(xml, { edit: (x) => shift(x, "NotBefore", 61_000) })));
    });
    it("NotOnOrAfter 50 s ago is still inside the skew and accepted", async () => {
      const { xml } = await validFor();
      signedIn(await acs(connA, resign(xml, { edit: (x) => shift(x, "NotOnOrAfter", -50_000) })));
    });
  });

  it("the ACS answers only a POST; a body far past the limit is 413 before any XML is read", async () => {
    expect((await send(get(`/sso/${connA}/acs`))).status).toBe(404);
    const res = await acs(connA, "x".repeat(800 * 1024));
    expect(res.status).toBe(413);
  });

  it("a response for connection A posted to connection B's ACS is refused", async () => {
    const { xml } = await validFor(connA);
    await expectRefused(await acs(connB, xml));
  });

  it("an unsolicited response is refused unless the connection allows IdP-initiated sign-in", async () => {
    const xml = await signedResponse(idpA, spOf(ORIGIN, connA), null, "ada@acme.test");
    await expectRefused(await acs(connA, xml));
    await testDb().samlConnection.update({ where: { id: connA }, data: { allowIdpInitiated: true } });
    signedIn(await acs(connA, xml, { RelayState: "/account" }));
  });

  it("a solicited assertion with its Response's InResponseTo stripped is not taken as unsolicited", async () => {
    await testDb().samlConnection.update({ where: { id: connA }, data: { allowIdpInitiated: true } });
    const { xml, id } = await validFor();
    await expectRefused(await acs(connA, xml.replace(` InResponseTo="${id}"`, "").replace(/(<samlp:Response[^>]*?) InResponseTo="[^"]*"/, "$1")));
  });

  it("org B's IdP asserting an address on org A's verified domain never reaches org A's account", async () => {
    const victim = await testDb().user.create({ data: { email: "boss@acme.test", emailVerified: new Date() } });
    const { xml } = await validFor(connB, "boss@acme.test");
    await expectRefused(await acs(connB, xml));
    expect(await testDb().samlIdentity.count()).toBe(0);
    expect(await testDb().membership.count({ where: { userId: victim.id } })).toBe(0);
  });

  it("an existing account with the address is not taken over; its owner links it by starting the sign-in while signed in", async () => {
    const owner = await member("ada@acme.test");
    const first = await validFor();
    const refused = await acs(connA, first.xml);
    expect(refused.headers.get("Location")).toMatch(/error=OAuthAccountNotLinked/);
    expect(await testDb().samlIdentity.count()).toBe(0);
    const id = await start(connA, owner.jar);
    const xml = await signedResponse(idpA, spOf(ORIGIN, connA), id, "ada@acme.test");
    signedIn(await acs(connA, xml));
    expect(await testDb().samlIdentity.findFirst({ where: { connectionId: connA } })).toMatchObject({ userId: owner.id });
    expect(await testDb().membership.count({ where: { userId: owner.id, organizationId: orgA } })).toBe(1);
  });

  it("the second certificate of the list verifies (rotation), and the next sign-in finds the person by (connection, NameID)", async () => {
    const one = await validFor();
    signedIn(await acs(connA, one.xml));
    const two = await validFor();
    const res = await acs(connA, two.xml);
    signedIn(res);
    expect(await testDb().user.count()).toBe(1);
  });
});

describe(`npm run saml:connection on ${dbLabel}`, () => {
  it("adds a connection for a verified domain, refuses an unverified one, and removes it", async () => {
    const cert = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../fixtures/saml/idp-cert.pem");
    const added = await runInProcess("scripts/saml-connection.ts", ["--org", "acme", "--entity-id", "https://idp2.acme.test", "--sso-url", "https://idp2.acme.test/sso", "--cert", cert, "--domains", "acme.test"]);
    expect(added).toMatchObject({ code: 0 });
    const id = /added SAML connection (\S+)/.exec(added.stdout)![1]!;
    expect(await testDb().samlConnection.findUniqueOrThrow({ where: { id } })).toMatchObject({ allowIdpInitiated: false, domains: "acme.test" });
    const foreign = await runInProcess("scripts/saml-connection.ts", ["--org", "acme", "--entity-id", "x", "--sso-url", "https://x.test/sso", "--cert", cert, "--domains", "beta.test"]);
    expect(foreign.code).not.toBe(0);
    expect((await runInProcess("scripts/saml-connection.ts", ["--remove", id])).code).toBe(0);
    expect(await testDb().samlConnection.findUnique({ where: { id } })).toBeNull();
  });
});

describe(`the SAML section of /orgs/<slug> on ${dbLabel}`, () => {
  it("an owner adds a connection by form (no JavaScript) and removes it; a member may not; another organization's connection is 404", async () => {
    const owner = await member("owner@gamma.test");
    const gamma = await createOrg(owner.jar, "gamma");
    await testDb().organizationDomain.create({
      data: { organizationId: gamma.id, domain: "gamma.test", verificationToken: "t", state: "verified", verifiedDomain: "gamma.test", verifiedAt: new Date() },
    });
    const fields = { intent: "saml-add", idpEntityId: "https://idp.gamma.test", ssoUrl: "https://idp.gamma.test/sso", certificates: IDP_CERT, domains: "gamma.test" };
    const added = await formPost(owner.jar, "/orgs/gamma", fields);
    expect(added.status).toBe(302);
    expect(added.headers.get("Location")).toMatch(/done=saml-added/);
    const page = (await (await jsonGet(owner.jar, "/orgs/gamma")).json()) as { samlConnections: { id: string; acsUrl: string; metadataUrl: string }[] };
    expect(page.samlConnections).toHaveLength(1);
    const [conn] = page.samlConnections;
    expect(conn!.acsUrl).toBe(`${ORIGIN}/sso/${conn!.id}/acs`);
    expect(await testDb().samlConnection.findUniqueOrThrow({ where: { id: conn!.id } })).toMatchObject({ allowIdpInitiated: false, organizationId: gamma.id });
    expect(await testDb().organizationAuditEvent.count({ where: { organizationId: gamma.id, type: "saml-connection-added" } })).toBe(1);

    // A domain the organization did not verify: refused.
    const refused = await jsonPost(owner.jar, "/orgs/gamma", { ...fields, domains: "acme.test" });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "InvalidInput" });

    // A plain member: 403.
    const plain = await member("plain@gamma.test");
    await addMember(gamma.id, plain.id, "member");
    expect((await jsonPost(plain.jar, "/orgs/gamma", fields)).status).toBe(403);

    // Another organization's connection: 404, nothing removed.
    expect((await jsonPost(owner.jar, "/orgs/gamma", { intent: "saml-remove", connectionId: connA })).status).toBe(404);
    expect(await testDb().samlConnection.findUnique({ where: { id: connA } })).not.toBeNull();

    const removed = await formPost(owner.jar, "/orgs/gamma", { intent: "saml-remove", connectionId: conn!.id });
    expect(removed.headers.get("Location")).toMatch(/done=saml-removed/);
    expect(await testDb().samlConnection.count({ where: { organizationId: gamma.id } })).toBe(0);
  });
});
