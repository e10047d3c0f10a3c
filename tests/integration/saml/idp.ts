// A SAML identity provider in the test process (samlify's IdP mode) and the tools to mutate its
// validly signed responses: re-signing an assertion (another key, SHA-1, a second Reference, other
// times) with xml-crypto, the library an attacker would use too.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { inflateRawSync } from "node:zlib";
import * as samlify from "samlify";
import { SignedXml } from "xml-crypto";

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = (name: string) => fs.readFileSync(path.resolve(here, "../../fixtures/saml", name), "utf8");
export const IDP_KEY = fixture("idp-key.pem");
export const IDP_CERT = fixture("idp-cert.pem");
export const OTHER_KEY = fixture("other-key.pem");
export const OTHER_CERT = fixture("other-cert.pem");
// A certificate still listed on a connection (rotation) whose key signs nothing here.
export const RETIRED_CERT = fixture("retired-cert.pem");

// samlify validates against the SAML schema only when asked to; our SP never relies on it.
samlify.setSchemaValidator({ validate: async () => "skipped" });

export function testIdp(entityID: string) {
  return samlify.IdentityProvider({
    entityID,
    privateKey: IDP_KEY,
    signingCert: IDP_CERT,
    singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: `${entityID}/sso` }],
    singleLogoutService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: `${entityID}/slo` }],
    nameIDFormat: ["urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"],
  });
}

/** samlify's view of our SP for connection `id` at `origin`. */
export function spOf(origin: string, id: string) {
  return samlify.ServiceProvider({
    entityID: `${origin}/sso/${id}/metadata`,
    assertionConsumerService: [{ Binding: samlify.Constants.namespace.binding.post, Location: `${origin}/sso/${id}/acs` }],
    wantAssertionsSigned: true,
  });
}

/** A validly signed response of `idp` for `sp`, answering `requestId` (none: unsolicited), as XML. */
export async function signedResponse(idp: ReturnType<typeof testIdp>, sp: ReturnType<typeof spOf>, requestId: string | null, email: string): Promise<string> {
  const { context } = await idp.createLoginResponse(sp, { extract: { request: { id: requestId ?? "" } } }, "post", { email });
  const xml = Buffer.from(context, "base64").toString("utf8");
  // samlify writes an empty InResponseTo for an unsolicited response: the IdP's own key signs the
  // assertion again without it, as an IdP-initiated response comes.
  return requestId ? xml : resign(xml, { edit: (x) => x.replace(/ InResponseTo=""/g, "") });
}

/** The AuthnRequest id in an HTTP-Redirect binding URL. */
export function requestIdOf(location: string): string {
  const xml = inflateRawSync(Buffer.from(new URL(location).searchParams.get("SAMLRequest")!, "base64")).toString("utf8");
  return /\bID="([^"]+)"/.exec(xml)![1]!;
}

const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
const RSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1";
const SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256";
const SHA1 = "http://www.w3.org/2000/09/xmldsig#sha1";
const ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";
const EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#";

/** The assertion's signature removed. */
export const unsigned = (xml: string) => xml.replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/, "");

/**
 * The assertion (after `edit` of its unsigned XML) signed again: with `key`/`cert` (the cert in
 * KeyInfo), SHA-1 when asked, a second Reference to the Issuer when asked.
 */
export function resign(xml: string, options: { key?: string; cert?: string; sha1?: boolean; secondReference?: boolean; edit?: (xml: string) => string } = {}): string {
  const edited = (options.edit ?? ((x) => x))(unsigned(xml));
  const sig = new SignedXml({
    privateKey: options.key ?? IDP_KEY,
    publicCert: options.cert ?? IDP_CERT,
    signatureAlgorithm: options.sha1 ? RSA_SHA1 : RSA_SHA256,
    canonicalizationAlgorithm: EXC_C14N,
  });
  sig.addReference({ xpath: "//*[local-name(.)='Assertion']", transforms: [ENVELOPED, EXC_C14N], digestAlgorithm: options.sha1 ? SHA1 : SHA256 });
  if (options.secondReference) sig.addReference({ xpath: "//*[local-name(.)='Status']", transforms: [EXC_C14N], digestAlgorithm: SHA256 });
  sig.computeSignature(edited, {
    prefix: "ds",
    location: { reference: "//*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: "after" },
  });
  return sig.getSignedXml();
}

export const b64 = (xml: string) => Buffer.from(xml, "utf8").toString("base64");

/** samlify's view of our SP read from our own metadata (its encryption certificate included). */
export function spFromMetadata(metadataXml: string) {
  return samlify.ServiceProvider({ metadata: metadataXml, wantAssertionsSigned: true });
}

/** An IdP that encrypts its assertions to the SP's encryption certificate (samlify's own way). */
export function encryptingIdp(entityID: string) {
  return samlify.IdentityProvider({
    entityID,
    privateKey: IDP_KEY,
    signingCert: IDP_CERT,
    isAssertionEncrypted: true,
    singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: `${entityID}/sso` }],
    nameIDFormat: ["urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"],
  });
}

const AES256_CBC = "http://www.w3.org/2001/04/xmlenc#aes256-cbc";
const RSA_OAEP = "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p";
const RSA_1_5 = "http://www.w3.org/2001/04/xmlenc#rsa-1_5";

/**
 * The response's assertion (as it is: signed or not) replaced by an EncryptedAssertion to `cert`,
 * with xml-encryption (what samlify and node-saml use); RSA PKCS#1 v1.5 key transport when asked.
 */
export async function encryptAssertion(xml: string, cert: string, options: { rsa15?: boolean } = {}): Promise<string> {
  const xmlenc = (await import("xml-encryption")).default as unknown as {
    encrypt: (content: string, options: Record<string, unknown>, callback: (error: Error | null, result: string) => void) => void;
  };
  const assertion = xml.match(/<saml:Assertion[\s\S]*<\/saml:Assertion>/)![0];
  // The assertion alone must declare the namespaces it uses (they were on the Response).
  const startTag = assertion.slice(0, assertion.indexOf(">"));
  const declarations = [
    ["saml", "urn:oasis:names:tc:SAML:2.0:assertion"],
    ["xs", "http://www.w3.org/2001/XMLSchema"],
    ["xsi", "http://www.w3.org/2001/XMLSchema-instance"],
  ]
    .filter(([prefix]) => !startTag.includes(`xmlns:${prefix}=`))
    .map(([prefix, uri]) => `xmlns:${prefix}="${uri}" `)
    .join("");
  const standalone = assertion.replace("<saml:Assertion ", `<saml:Assertion ${declarations}`);
  const { X509Certificate } = await import("node:crypto");
  const encrypted = await new Promise<string>((resolve, reject) =>
    xmlenc.encrypt(
      standalone,
      {
        rsa_pub: new X509Certificate(cert).publicKey.export({ type: "spki", format: "pem" }),
        pem: cert,
        encryptionAlgorithm: AES256_CBC,
        keyEncryptionAlgorithm: options.rsa15 ? RSA_1_5 : RSA_OAEP,
        disallowEncryptionWithInsecureAlgorithm: false,
        warnInsecureAlgorithm: false,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    ),
  );
  return xml.replace(assertion, `<saml:EncryptedAssertion>${encrypted}</saml:EncryptedAssertion>`);
}
