// Checks on the raw response before node-saml reads it (ADR 154): shapes no honest identity
// provider sends and that the signature-wrapping family needs. node-saml then verifies the
// signature and reads the identity only from the signed assertion; this is a second wall, with
// the same XML parser (@xmldom/xmldom, the one node-saml and xml-crypto use).
import { decryptXml } from "@node-saml/node-saml/lib/xml";
import { DOMParser } from "@xmldom/xmldom";

/** At most this many bytes of decoded response. */
export const SAML_RESPONSE_MAX_BYTES = 256 * 1024;

const DSIG = "http://www.w3.org/2000/09/xmldsig#";
const SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol";
const SAML = "urn:oasis:names:tc:SAML:2.0:assertion";

/** Signature and digest algorithms accepted: SHA-256 and stronger; SHA-1 never. */
const SIGNATURE_ALGORITHMS = new Set([
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
]);
const DIGEST_ALGORITHMS = new Set(["http://www.w3.org/2001/04/xmlenc#sha256", "http://www.w3.org/2001/04/xmlenc#sha512"]);

const XENC = "http://www.w3.org/2001/04/xmlenc#";
/**
 * Encryption of an assertion (ADR 168): AES (GCM, or CBC as most IdPs still send) for the data,
 * RSA-OAEP for the key. RSA PKCS#1 v1.5 key transport (Bleichenbacher) and 3DES are refused.
 */
const ENCRYPTION_ALGORITHMS = new Set([
  "http://www.w3.org/2009/xmlenc11#aes128-gcm",
  "http://www.w3.org/2009/xmlenc11#aes256-gcm",
  "http://www.w3.org/2001/04/xmlenc#aes128-cbc",
  "http://www.w3.org/2001/04/xmlenc#aes256-cbc",
  "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p",
  "http://www.w3.org/2009/xmlenc11#rsa-oaep",
]);

export type GuardedResponse = { inResponseTo: string | null; destination: string | null; encrypted: boolean };

const ELEMENT = 1;
const PROCESSING_INSTRUCTION = 7;
const COMMENT = 8;
const DOCUMENT_TYPE = 10;

/** Throws (a plain Error naming the reason, for the log) unless the response has the one honest shape. */
function parse(xml: string) {
  const problems: string[] = [];
  const doc = new DOMParser({
    errorHandler: {
      warning: () => {},
      error: (m: string) => problems.push(m),
      fatalError: (m: string) => problems.push(m),
    },
  }).parseFromString(xml, "text/xml");
  if (problems.length) throw new Error(`malformed XML: ${problems[0]}`);
  return doc;
}

export function guardResponse(xml: string): GuardedResponse {
  if (Buffer.byteLength(xml, "utf8") > SAML_RESPONSE_MAX_BYTES) throw new Error("response too large");
  const doc = parse(xml);
  const root = doc.documentElement;
  if (!root || root.namespaceURI !== SAMLP || root.localName !== "Response") throw new Error("not a samlp:Response");
  const { assertions, encrypted } = walkChecked(doc as unknown as Node, root as unknown as Element);
  if (assertions !== 1) throw new Error(`${assertions} assertions`);
  return { inResponseTo: root.getAttribute("InResponseTo") || null, destination: root.getAttribute("Destination") || null, encrypted: encrypted > 0 };
}

/**
 * The decrypted content of an EncryptedAssertion: exactly one saml:Assertion and nothing else, under
 * the same rules as a plain response (no comment, processing instruction, DOCTYPE or duplicate id;
 * a signature only in the assertion, of the accepted form; no assertion nested in it).
 */
export function guardAssertion(xml: string): void {
  if (Buffer.byteLength(xml, "utf8") > SAML_RESPONSE_MAX_BYTES) throw new Error("decrypted assertion too large");
  const doc = parse(xml);
  const root = doc.documentElement;
  if (!root || root.namespaceURI !== SAML || root.localName !== "Assertion") throw new Error("the encrypted content is not one saml:Assertion");
  for (let c = doc.firstChild; c; c = c.nextSibling) if ((c as unknown) !== (root as unknown) && c.nodeType !== PROCESSING_INSTRUCTION) throw new Error("more than one assertion in the encrypted content");
  const { assertions, encrypted } = walkChecked(doc as unknown as Node, null);
  if (assertions !== 1 || encrypted !== 0) throw new Error("an assertion nested in the encrypted assertion");
}

/** The assertion inside the Response's one EncryptedAssertion, decrypted with `privateKey`. */
export async function decryptAssertion(responseXml: string, privateKey: string): Promise<string> {
  const doc = parse(responseXml);
  const found = Array.from(doc.getElementsByTagNameNS(SAML, "EncryptedAssertion"));
  if (found.length !== 1) throw new Error("not exactly one EncryptedAssertion");
  try {
    return await decryptXml(found[0]!.toString(), privateKey);
  } catch {
    throw new Error("the encrypted assertion does not open with this connection's key");
  }
}

/**
 * Walks every node: refuses comments, processing instructions, DOCTYPEs, duplicate ids, weak or
 * misplaced signatures and encryption algorithms; counts assertions (plain and encrypted). With
 * `topLevel`, an assertion anywhere but directly under it is refused.
 */
function walkChecked(start: Node, topLevel: Element | null): { assertions: number; encrypted: number } {
  const ids = new Set<string>();
  let assertions = 0;
  let encrypted = 0;
  const walk = (node: Node) => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === COMMENT) throw new Error("comment in the response");
      if (child.nodeType === PROCESSING_INSTRUCTION) throw new Error("processing instruction in the response");
      if (child.nodeType === DOCUMENT_TYPE) throw new Error("DOCTYPE in the response");
      if (child.nodeType !== ELEMENT) continue;
      const el = child as Element;
      for (const name of ["ID", "Id", "id"]) {
        const value = el.getAttribute(name);
        if (!value) continue;
        if (ids.has(value)) throw new Error("duplicate ID");
        ids.add(value);
      }
      if (el.namespaceURI === SAML && (el.localName === "Assertion" || el.localName === "EncryptedAssertion")) {
        assertions += 1;
        if (el.localName === "EncryptedAssertion") encrypted += 1;
        // Only as a child of the Response: never hidden in Extensions, another assertion or an Advice.
        if (topLevel && (el.parentNode as unknown) !== (topLevel as unknown)) throw new Error("assertion outside the Response's top level");
      }
      if (el.namespaceURI === DSIG && el.localName === "Signature") checkSignature(el);
      if (el.namespaceURI === XENC && el.localName === "EncryptionMethod" && !ENCRYPTION_ALGORITHMS.has(el.getAttribute("Algorithm") ?? "")) throw new Error("encryption algorithm refused");
      walk(el);
    }
  };
  walk(start);
  return { assertions, encrypted };
}

function children(el: Element, localName: string): Element[] {
  const out: Element[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === ELEMENT && (c as Element).namespaceURI === DSIG && (c as Element).localName === localName) out.push(c as Element);
  }
  return out;
}

/** One SignedInfo, one Reference, SHA-256 or better, and the signature sits in the element it signs. */
function checkSignature(signature: Element) {
  const parent = signature.parentNode as Element | null;
  const parentOk = parent && ((parent.namespaceURI === SAMLP && parent.localName === "Response") || (parent.namespaceURI === SAML && parent.localName === "Assertion"));
  if (!parentOk) throw new Error("signature in an unexpected place");
  const signedInfo = children(signature, "SignedInfo");
  if (signedInfo.length !== 1) throw new Error("signature without exactly one SignedInfo");
  const methods = children(signedInfo[0]!, "SignatureMethod");
  if (methods.length !== 1 || !SIGNATURE_ALGORITHMS.has(methods[0]!.getAttribute("Algorithm") ?? "")) throw new Error("signature algorithm refused");
  const references = children(signedInfo[0]!, "Reference");
  if (references.length !== 1) throw new Error("signature without exactly one Reference");
  const reference = references[0]!;
  const digests = children(reference, "DigestMethod");
  if (digests.length !== 1 || !DIGEST_ALGORITHMS.has(digests[0]!.getAttribute("Algorithm") ?? "")) throw new Error("digest algorithm refused");
  const uri = reference.getAttribute("URI") ?? "";
  if (uri !== `#${parent!.getAttribute("ID") ?? ""}` || uri === "#") throw new Error("signature does not reference its own element");
}
