// What an organization's admin does with a SAML connection after adding it, and what the assertion
// consumer does around the signature checks of saml.test.ts (docs/features/saml.md, ADR 167–168):
// the IdP's metadata by pasted XML or by URL (fetched under the SSRF guard) with a sentence for
// each bad input, certificates added and removed for a rotation (the last one stays), the
// IdP-initiated switch (off by default, recent sign-in, audited), encrypted assertions (the SP's
// own key pair per connection, published in its metadata; the assertion inside must still be
// signed), the ACS's rate limits before any XML is read, removal unlinking people without touching
// their accounts, and the account page naming such a sign-in by its organization.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { X509Certificate } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { addConnection, setIdpMetadataFetchTestSeam } from "../../../app/auth/saml/index.ts";
import { parseIdpMetadata, IdpMetadataError } from "../../../app/auth/saml/idp-metadata.server.ts";
import * as account from "../../../app/routes/account.tsx";
import { runInProcess } from "../../support/cli.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, post } from "../../support/http.ts";
import { ageSession } from "../../support/reauth.ts";
import { configure } from "../email/helpers.ts";
import { addMember, createOrg, formPost, jsonGet, jsonPost, member, ORIGIN, send, useApp } from "../organizations/helpers.ts";
import { b64, encryptAssertion, encryptingIdp, IDP_CERT, OTHER_CERT, requestIdOf, signedResponse, spFromMetadata, spOf, testIdp, unsigned } from "./idp.ts";
import { finishInBrowser, samlStart } from "./sp-steps.ts";

useApp();

const IDP = "https://idp.gamma.test";
const idp = testIdp(IDP);
const IDP_METADATA = idp.getMetadata();
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

let owner: { jar: CookieJar; id: string };
let orgId: string;

beforeEach(async () => {
  await resetDatabase();
  configure({ AUTH_ORGANIZATIONS: "true" });
  owner = await member("owner@gamma.test");
  orgId = (await createOrg(owner.jar, "gamma", "Gamma Corp")).id;
  await testDb().organizationDomain.create({
    data: { organizationId: orgId, domain: "gamma.test", verificationToken: "t", state: "verified", verifiedDomain: "gamma.test", verifiedAt: new Date() },
  });
});

async function connection(extra: Partial<Parameters<typeof addConnection>[0]> = {}) {
  const added = await addConnection({ organizationId: orgId, idpEntityId: IDP, ssoUrl: `${IDP}/sso`, certificates: [IDP_CERT], domains: ["gamma.test"], ...extra });
  if (!added.ok) throw new Error(added.reason);
  return added.id;
}

async function start(id: string, jar?: CookieJar): Promise<string> {
  const started = await samlStart(id, jar);
  expect(started.res.status).toBe(302);
  return started.id;
}

async function acs(id: string, xml: string | null, client = "203.0.113.7", raw?: string) {
  return finishInBrowser(
    await send(
      post(`/sso/${id}/acs`, { SAMLResponse: raw ?? b64(xml!) }, { headers: { Origin: IDP, "Sec-Fetch-Site": "cross-site", Accept: "text/html", "X-Vestibule-Remote-Addr": client } }),
    ),
  );
}

function signedIn(res: Response) {
  expect(res.status).toBe(302);
  expect(res.headers.get("Location")).not.toMatch(/error=/);
  expect(res.headers.getSetCookie().some((c) => /session-token=[^;]/.test(c))).toBe(true);
}

async function refused(res: Response) {
  expect(res.status).toBe(302);
  expect(res.headers.get("Location")).toMatch(/error=/);
  expect(res.headers.getSetCookie().some((c) => /session-token=[^;]/.test(c))).toBe(false);
}

describe(`the IdP's metadata as XML (${dbLabel})`, () => {
  it("reads the entity id, the HTTP-Redirect SSO URL and every signing certificate", () => {
    expect(parseIdpMetadata(IDP_METADATA)).toEqual({ entityId: IDP, ssoUrl: `${IDP}/sso`, certificates: [expect.stringContaining("BEGIN CERTIFICATE")] });
    // Two signing keys (a rotation under way): both are taken.
    const second = OTHER_CERT.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, "");
    const rotated = IDP_METADATA.replace(/(<\/(?:md:)?KeyDescriptor>)/, `$1<KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${second}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></KeyDescriptor>`);
    expect(parseIdpMetadata(rotated).certificates.map(fingerprint)).toEqual([fingerprint(IDP_CERT), fingerprint(OTHER_CERT)]);
  });

  const bad: [string, string, string][] = [
    ["not XML", "this is not XML <", "not-xml"],
    ["a DOCTYPE with an entity", `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${IDP_METADATA}`, "doctype"],
    ["a service provider's metadata", IDP_METADATA.replace(/IDPSSODescriptor/g, "SPSSODescriptor"), "not-idp-metadata"],
    ["no HTTP-Redirect SSO", IDP_METADATA.replace(/HTTP-Redirect/g, "HTTP-Artifact"), "no-redirect-sso"],
    ["no signing certificate", IDP_METADATA.replace(/<(?:md:)?KeyDescriptor[\s\S]*?<\/(?:md:)?KeyDescriptor>/g, ""), "no-signing-certificate"],
    ["a certificate that is not one", IDP_METADATA.replace(/<ds:X509Certificate>[^<]+</, "<ds:X509Certificate>bm90IGEgY2VydA==<"), "bad-certificate"],
    ["no entity id", IDP_METADATA.replace(/entityID="[^"]*"/, ""), "no-entity-id"],
    ["more than 256 KB", IDP_METADATA.replace(/(<\/(?:md:)?EntityDescriptor>)/, `<!--${"x".repeat(257 * 1024)}-->$1`), "too-large"],
  ];
  for (const [name, xml, reason] of bad) {
    it(`refuses ${name} (${reason})`, () => {
      let caught: unknown;
      try {
        parseIdpMetadata(xml);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(IdpMetadataError);
      expect((caught as IdpMetadataError).reason).toBe(reason);
    });
  }

  it("an owner adds a connection from pasted metadata by form (no JavaScript); a bad paste gets its own sentence", async () => {
    const res = await formPost(owner.jar, "/orgs/gamma", { intent: "saml-add", metadataXml: IDP_METADATA, domains: "gamma.test" });
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toMatch(/done=saml-added/);
    const row = await testDb().samlConnection.findFirstOrThrow({ where: { organizationId: orgId } });
    expect(row).toMatchObject({ idpEntityId: IDP, ssoUrl: `${IDP}/sso`, allowIdpInitiated: false });
    expect((JSON.parse(row.certificates) as string[]).map(fingerprint)).toEqual([fingerprint(IDP_CERT)]);
    // And people sign in through it.
    const id = await start(row.id);
    signedIn(await acs(row.id, await signedResponse(idp, spOf(ORIGIN, row.id), id, "ada@gamma.test")));

    const badPaste = await formPost(owner.jar, "/orgs/gamma", { intent: "saml-add", metadataXml: IDP_METADATA.replace(/HTTP-Redirect/g, "HTTP-Artifact"), domains: "gamma.test" });
    expect(badPaste.status).toBe(400);
    expect(await badPaste.text()).toContain("no sign-in URL for the HTTP-Redirect binding");
    const json = await jsonPost(owner.jar, "/orgs/gamma", { intent: "saml-add", metadataXml: "<nope", domains: "gamma.test" });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: "InvalidMetadata", message: "The metadata is not well-formed XML." });
    expect(await testDb().samlConnection.count()).toBe(1);
  });

  it("npm run saml:connection takes --metadata FILE", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "saml-md-")), "idp.xml");
    fs.writeFileSync(file, IDP_METADATA);
    const added = await runInProcess("scripts/saml-connection.ts", ["--org", "gamma", "--metadata", file, "--domains", "gamma.test"]);
    expect(added.code).toBe(0);
    const id = /added SAML connection (\S+)/.exec(added.stdout)![1]!;
    expect(await testDb().samlConnection.findUniqueOrThrow({ where: { id } })).toMatchObject({ idpEntityId: IDP, ssoUrl: `${IDP}/sso` });
    fs.writeFileSync(file, "<!DOCTYPE x []><x/>");
    const bad = await runInProcess("scripts/saml-connection.ts", ["--org", "gamma", "--metadata", file, "--domains", "gamma.test"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/DOCTYPE/);
  });
});

describe(`the IdP's metadata by URL (${dbLabel})`, () => {
  let server: Server;
  let port: number;
  const answers = new Map<string, (res: import("node:http").ServerResponse) => void>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      const answer = answers.get(req.url ?? "");
      if (answer) return answer(res);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    answers.set("/metadata", (res) => res.writeHead(200, { "Content-Type": "application/samlmetadata+xml" }).end(IDP_METADATA));
    answers.set("/moved", (res) => res.writeHead(302, { Location: "/metadata" }).end());
    answers.set("/huge", (res) => res.writeHead(200).end("<x>" + "a".repeat(300 * 1024) + "</x>"));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  // The name resolves to a public address; the connection goes to the local server (the guard has
  // already passed on the address resolved).
  const publicSeam = () => setIdpMetadataFetchTestSeam({ allowHttp: true, resolve: async () => [{ address: "93.184.215.14", family: 4 }], connectTo: () => ({ address: "127.0.0.1", family: 4 }) });
  afterEach(() => setIdpMetadataFetchTestSeam(null));

  it("fetches it and adds the connection", async () => {
    publicSeam();
    const res = await jsonPost(owner.jar, "/orgs/gamma", { intent: "saml-add", metadataUrl: `http://idp.gamma.test:${port}/metadata`, domains: "gamma.test" });
    expect(res.status).toBe(200);
    const { connection } = (await res.json()) as { connection: { id: string } };
    expect(await testDb().samlConnection.findUniqueOrThrow({ where: { id: connection.id } })).toMatchObject({ idpEntityId: IDP, ssoUrl: `${IDP}/sso` });
  });

  const cases: [string, () => void, (port: number) => string, string][] = [
    ["plain http (no test seam)", () => {}, (p) => `http://idp.gamma.test:${p}/metadata`, "The metadata URL must be an https: URL."],
    ["a name resolving to a private address", () => setIdpMetadataFetchTestSeam({ allowHttp: true, resolve: async () => [{ address: "10.0.0.5", family: 4 }] }), (p) => `http://idp.gamma.test:${p}/metadata`, "private or local address"],
    ["the loopback address itself", () => setIdpMetadataFetchTestSeam({ allowHttp: true }), (p) => `http://127.0.0.1:${p}/metadata`, "private or local address"],
    ["a link-local address (cloud metadata)", () => setIdpMetadataFetchTestSeam({ allowHttp: true }), () => "http://169.254.169.254/latest/meta-data", "private or local address"],
    ["a redirect", publicSeam, (p) => `http://idp.gamma.test:${p}/moved`, "without a redirect"],
    ["more than 256 KB", publicSeam, (p) => `http://idp.gamma.test:${p}/huge`, "larger than 256 KB"],
    ["a 404", publicSeam, (p) => `http://idp.gamma.test:${p}/nothing`, "could not be fetched"],
  ];
  for (const [name, seam, url, sentence] of cases) {
    it(`refuses ${name} with its own sentence, and adds nothing`, async () => {
      seam();
      const res = await jsonPost(owner.jar, "/orgs/gamma", { intent: "saml-add", metadataUrl: url(port), domains: "gamma.test" });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string; message: string };
      expect(body.error).toBe("InvalidMetadata");
      expect(body.message).toContain(sentence);
      expect(await testDb().samlConnection.count()).toBe(0);
    });
  }
});

describe(`certificates for a rotation, and the IdP-initiated switch (${dbLabel})`, () => {
  it("adds a certificate, removes the old one, never the last; a member may not; each change is audited", async () => {
    const id = await connection();
    const added = await formPost(owner.jar, "/orgs/gamma", { intent: "saml-certificate-add", connectionId: id, certificate: OTHER_CERT });
    expect(added.headers.get("Location")).toMatch(/done=saml-certificate-added/);
    const page = (await (await jsonGet(owner.jar, "/orgs/gamma")).json()) as { samlConnections: { certificates: { fingerprint: string }[] }[] };
    expect(page.samlConnections[0]!.certificates.map((c) => c.fingerprint)).toEqual([fingerprint(IDP_CERT), fingerprint(OTHER_CERT)]);

    const notPem = await jsonPost(owner.jar, "/orgs/gamma", { intent: "saml-certificate-add", connectionId: id, certificate: "hello" });
    expect(notPem.status).toBe(400);
    expect(await notPem.json()).toMatchObject({ error: "InvalidCertificate" });

    const removed = await formPost(owner.jar, "/orgs/gamma", { intent: "saml-certificate-remove", connectionId: id, fingerprint: fingerprint(IDP_CERT) });
    expect(removed.headers.get("Location")).toMatch(/done=saml-certificate-removed/);
    const last = await jsonPost(owner.jar, "/orgs/gamma", { intent: "saml-certificate-remove", connectionId: id, fingerprint: fingerprint(OTHER_CERT) });
    expect(last.status).toBe(409);
    expect(await last.json()).toMatchObject({ error: "LastCertificate" });
    const stored = await testDb().samlConnection.findUniqueOrThrow({ where: { id } });
    expect((JSON.parse(stored.certificates) as string[]).map(fingerprint)).toEqual([fingerprint(OTHER_CERT)]);

    // The IdP's old key no longer signs in; that is the rotation's point.
    const requestId = await start(id);
    await refused(await acs(id, await signedResponse(idp, spOf(ORIGIN, id), requestId, "ada@gamma.test")));

    const plain = await member("plain@gamma.test");
    await addMember(orgId, plain.id, "member");
    expect((await jsonPost(plain.jar, "/orgs/gamma", { intent: "saml-certificate-add", connectionId: id, certificate: IDP_CERT })).status).toBe(403);
    expect(await testDb().organizationAuditEvent.count({ where: { organizationId: orgId, type: { in: ["saml-certificate-added", "saml-certificate-removed"] } } })).toBe(2);
  });

  it("IdP-initiated sign-in: off by default, turned on only after a recent sign-in, audited, and then an unsolicited response signs in", async () => {
    const id = await connection();
    expect((await testDb().samlConnection.findUniqueOrThrow({ where: { id } })).allowIdpInitiated).toBe(false);
    const unsolicited = await signedResponse(idp, spOf(ORIGIN, id), null, "ada@gamma.test");
    await refused(await acs(id, unsolicited));

    await ageSession(owner.jar, 11);
    const stale = await jsonPost(owner.jar, "/orgs/gamma", { intent: "saml-idp-initiated", connectionId: id, enabled: "on" });
    expect(stale.status).toBe(403);
    expect(await stale.json()).toMatchObject({ error: "ReauthRequired" });
    expect((await testDb().samlConnection.findUniqueOrThrow({ where: { id } })).allowIdpInitiated).toBe(false);

    await ageSession(owner.jar, 0);
    const on = await formPost(owner.jar, "/orgs/gamma", { intent: "saml-idp-initiated", connectionId: id, enabled: "on" });
    expect(on.headers.get("Location")).toMatch(/done=saml-idp-initiated-on/);
    expect((await testDb().samlConnection.findUniqueOrThrow({ where: { id } })).allowIdpInitiated).toBe(true);
    const event = await testDb().organizationAuditEvent.findFirstOrThrow({ where: { organizationId: orgId, type: "saml-idp-initiated-changed" } });
    expect(JSON.parse(event.detail!)).toEqual({ connectionId: id, on: true });
    signedIn(await acs(id, unsolicited));

    const off = await formPost(owner.jar, "/orgs/gamma", { intent: "saml-idp-initiated", connectionId: id, enabled: "off" });
    expect(off.headers.get("Location")).toMatch(/done=saml-idp-initiated-off/);
    expect((await testDb().samlConnection.findUniqueOrThrow({ where: { id } })).allowIdpInitiated).toBe(false);
  });

  it("the page shows the section with its forms, rendered without JavaScript", async () => {
    await connection();
    const res = await send(get("/orgs/gamma", { jar: owner.jar, headers: { Accept: "text/html" } }));
    const html = await res.text();
    for (const intent of ["saml-add", "saml-remove", "saml-certificate-add", "saml-idp-initiated"]) expect(html).toContain(`value="${intent}"`);
    expect(html).toContain('name="metadataUrl"');
    expect(html).toContain('name="metadataXml"');
    expect(html).toContain("The last certificate cannot be removed");
    expect(html).not.toContain('value="saml-certificate-remove"');
  });
});

describe(`encrypted assertions (${dbLabel})`, () => {
  async function spMetadata(id: string) {
    const res = await send(get(`/sso/${id}/metadata`));
    expect(res.status).toBe(200);
    return res.text();
  }
  const encryptionCertOf = (xml: string) => {
    const body = /<KeyDescriptor use="encryption">[\s\S]*?<(?:ds:)?X509Certificate>([^<]+)</.exec(xml)![1]!;
    return `-----BEGIN CERTIFICATE-----\n${body.replace(/\s+/g, "").match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----`;
  };

  it("the metadata publishes the connection's own encryption certificate; its private key is sealed in the database", async () => {
    const id = await connection();
    const xml = await spMetadata(id);
    const cert = encryptionCertOf(xml);
    expect(new X509Certificate(cert).publicKey.asymmetricKeyType).toBe("rsa");
    expect(encryptionCertOf(await spMetadata(id))).toBe(cert);
    const row = await testDb().samlConnection.findUniqueOrThrow({ where: { id } });
    expect(row.encryptionCert).toBe(cert);
    expect(row.decryptionKey).not.toMatch(/PRIVATE KEY/);
    // Another connection has another key.
    expect(encryptionCertOf(await spMetadata(await connection()))).not.toBe(cert);
  });

  it("after an AUTH_SECRET rotation, npm run secret:reseal re-seals the decryption key and encrypted sign-ins go on", async () => {
    const A = "a".repeat(40);
    const B = "b".repeat(40);
    configure({ AUTH_SECRET: A });
    const id = await connection();
    const before = (await testDb().samlConnection.findUniqueOrThrow({ where: { id } })).decryptionKey;
    configure({ AUTH_SECRET: `${B},${A}` });
    const resealed = await runInProcess("scripts/secret-reseal.ts", []);
    expect(resealed.stdout).toContain("saml-decryption-key: 1 re-sealed");
    expect((await testDb().samlConnection.findUniqueOrThrow({ where: { id } })).decryptionKey).not.toBe(before);
    configure({ AUTH_SECRET: B });
    const cert = encryptionCertOf(await spMetadata(id));
    const requestId = await start(id);
    signedIn(await acs(id, await encryptAssertion(await signedResponse(idp, spOf(ORIGIN, id), requestId, "ada@gamma.test"), cert)));
  });

  it("a connection made before keys existed gets one at its first metadata request", async () => {
    const id = await connection();
    await testDb().samlConnection.update({ where: { id }, data: { encryptionCert: null, decryptionKey: null } });
    const cert = encryptionCertOf(await spMetadata(id));
    expect((await testDb().samlConnection.findUniqueOrThrow({ where: { id } })).encryptionCert).toBe(cert);
  });

  it("samlify's IdP encrypting to the published certificate (signed inside): accepted", async () => {
    const id = await connection();
    const sp = spFromMetadata(await spMetadata(id));
    const requestId = await start(id);
    const { context } = await encryptingIdp(IDP).createLoginResponse(sp, { extract: { request: { id: requestId } } }, "post", { email: "ada@gamma.test" });
    const xml = Buffer.from(context, "base64").toString("utf8");
    expect(xml).toContain("EncryptedAssertion");
    expect(xml).not.toContain("ada@gamma.test");
    signedIn(await acs(id, xml));
    expect(await testDb().samlIdentity.count({ where: { connectionId: id, subject: "ada@gamma.test" } })).toBe(1);
  });

  it("encrypted and signed: accepted; encrypted but unsigned: refused; encrypted with RSA PKCS#1 v1.5 or to another key: refused", async () => {
    const id = await connection();
    const cert = encryptionCertOf(await spMetadata(id));
    const fresh = async () => signedResponse(idp, spOf(ORIGIN, id), await start(id), "ada@gamma.test");

    await refused(await acs(id, await encryptAssertion(unsigned(await fresh()), cert)));
    await refused(await acs(id, await encryptAssertion(await fresh(), cert, { rsa15: true })));
    await refused(await acs(id, await encryptAssertion(await fresh(), OTHER_CERT)));
    // A signed encrypted assertion beside a plain unsigned one: two assertions.
    const both = await fresh();
    const plainCopy = unsigned(both).match(/<saml:Assertion[\s\S]*<\/saml:Assertion>/)![0].replace(/ID="[^"]+"/, 'ID="_other"');
    await refused(await acs(id, (await encryptAssertion(both, cert)).replace("</saml:EncryptedAssertion>", `</saml:EncryptedAssertion>${plainCopy}`)));
    // A comment inside the NameID of the encrypted assertion (the decrypted content is guarded too).
    const commented = (await fresh()).replace(">ada@gamma.test<", ">ada@gamma.test<!---->.evil<");
    await refused(await acs(id, await encryptAssertion(commented, cert)));
    expect(await testDb().user.count({ where: { email: { contains: "ada" } } })).toBe(0);

    signedIn(await acs(id, await encryptAssertion(await fresh(), cert)));
  });
});

describe(`the assertion consumer's limits (${dbLabel})`, () => {
  it("per client address: past the limit the sign-in page's limit message, before the body is read", async () => {
    configure({ AUTH_RATE_LIMIT_SAML_ACS_CLIENT: "2/900" });
    const id = await connection();
    await refused(await acs(id, null, "203.0.113.7", "bm90IHhtbA=="));
    await refused(await acs(id, null, "203.0.113.7", "bm90IHhtbA=="));
    // The third: not even a valid response would be read.
    const requestId = await start(id);
    const limited = await acs(id, await signedResponse(idp, spOf(ORIGIN, id), requestId, "ada@gamma.test"));
    expect(limited.status).toBe(302);
    expect(limited.headers.get("Location")).toMatch(/error=RateLimited/);
    expect(limited.headers.get("Location")).toMatch(/limit=network/);
    expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await testDb().user.count({ where: { email: "ada@gamma.test" } })).toBe(0);
    // Another address still gets through.
    const again = await start(id);
    signedIn(await acs(id, await signedResponse(idp, spOf(ORIGIN, id), again, "ada@gamma.test"), "198.51.100.9"));
  });

  it("per connection: many addresses together stop at the connection's limit; another connection is not affected; a JSON client gets 429", async () => {
    configure({ AUTH_RATE_LIMIT_SAML_ACS_CONNECTION: "2/900" });
    const id = await connection();
    const other = await connection();
    await refused(await acs(id, null, "203.0.113.1", "eA=="));
    await refused(await acs(id, null, "203.0.113.2", "eA=="));
    const limited = await acs(id, null, "203.0.113.3", "eA==");
    expect(limited.headers.get("Location")).toMatch(/error=RateLimited/);
    const json = await send(
      post(`/sso/${id}/acs`, { SAMLResponse: "eA==", json: "true" }, { headers: { Origin: IDP, "X-Auth-Return-Redirect": "1", "X-Vestibule-Remote-Addr": "203.0.113.4" } }),
    );
    expect([302, 429]).toContain(json.status);
    const requestId = await start(other);
    signedIn(await acs(other, await signedResponse(idp, spOf(ORIGIN, other), requestId, "ada@gamma.test"), "203.0.113.5"));
  });
});

describe(`removing a connection, and how /account names such a sign-in (${dbLabel})`, () => {
  it("the account page says '<organization> (company sign-in)' in sessions and activity, never 'saml'; removal unlinks the person, ends that session and keeps the account", async () => {
    const id = await connection();
    const requestId = await start(id);
    const res = await acs(id, await signedResponse(idp, spOf(ORIGIN, id), requestId, "ada@gamma.test"));
    signedIn(res);
    const jar = new CookieJar();
    jar.apply(res);

    const data = (await (await callRoute(account.loader, get("/account", { jar }))).json()) as {
      sessions: { method: string | null; methodType: string | null }[];
      events: { type: string; method: string | null; methodType: string | null }[];
    };
    expect(data.sessions).toEqual([expect.objectContaining({ method: "Gamma Corp", methodType: "organization" })]);
    expect(data.events.find((e) => e.type === "signin")).toMatchObject({ method: "Gamma Corp", methodType: "organization" });
    const html = await (await send(get("/account", { jar, headers: { Accept: "text/html" } }))).text();
    expect(html).toContain("Signed in through Gamma Corp (company sign-in)");
    // Never the method's id or protocol in what the page shows (the catalogue shipped with the
    // page has "SAML" in other sections' words, so the shown text is what is checked).
    expect(html).not.toMatch(/Signed in with (SAML|saml)|>saml</);
    // In German too.
    const de = await (await send(get("/account", { jar, headers: { Accept: "text/html", "Accept-Language": "de" } }))).text();
    expect(de).toContain("Über Gamma Corp angemeldet (Firmen-Anmeldung)");

    const user = await testDb().user.findUniqueOrThrow({ where: { email: "ada@gamma.test" } });
    const removed = await formPost(owner.jar, "/orgs/gamma", { intent: "saml-remove", connectionId: id });
    expect(removed.headers.get("Location")).toMatch(/done=saml-removed/);
    expect(await testDb().samlIdentity.count()).toBe(0);
    expect(await testDb().user.findUnique({ where: { id: user.id } })).not.toBeNull();
    expect(await testDb().membership.count({ where: { userId: user.id, organizationId: orgId } })).toBe(1);
    // The session that link started has ended.
    expect(await testDb().session.count({ where: { userId: user.id, revokedAt: null } })).toBe(0);
    expect((await callRoute(account.loader, get("/account", { jar }))).status).toBe(302);
  });

  it("a session whose connection is gone is named by the fallback words", async () => {
    const id = await connection();
    const requestId = await start(id);
    const res = await acs(id, await signedResponse(idp, spOf(ORIGIN, id), requestId, "ada@gamma.test"));
    const jar = new CookieJar();
    jar.apply(res);
    // The identity row goes without the session ending (as a connection's removal by another path would leave it).
    await testDb().samlIdentity.deleteMany();
    const html = await (await send(get("/account", { jar, headers: { Accept: "text/html" } }))).text();
    expect(html).toContain("Signed in through a company sign-in");
  });
});
