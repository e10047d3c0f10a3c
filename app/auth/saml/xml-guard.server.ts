// Checks on the raw response before node-saml reads it (ADR 154): shapes no honest identity
// provider sends and that the signature-wrapping family needs. node-saml then verifies the
// signature and reads the identity only from the signed assertion; this is a second wall, with
// the same XML parser (@xmldom/xmldom, the one node-saml and xml-crypto use).
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

export type GuardedResponse = { inResponseTo: string | null; destination: string | null };

const ELEMENT = 1;
const PROCESSING_INSTRUCTION = 7;
const COMMENT = 8;
const DOCUMENT_TYPE = 10;

/** Throws (a plain Error naming the reason, for the log) unless the response has the one honest shape. */
export function guardResponse(xml: string): GuardedResponse {
  if (Buffer.byteLength(xml, "utf8") > SAML_RESPONSE_MAX_BYTES) throw new Error("response too large");
  const problems: string[] = [];
  const doc = new DOMParser({
    errorHandler: {
      warning: () => {},
      error: (m: string) => problems.push(m),
      fatalError: (m: string) => problems.push(m),
    },
  }).parseFromString(xml, "text/xml");
  if (problems.length) throw new Error(`malformed XML: ${problems[0]}`);
  const root = doc.documentElement;
  if (!root || root.namespaceURI !== SAMLP || root.localName !== "Response") throw new Error("not a samlp:Response");

  const ids = new Set<string>();
  let assertions = 0;
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
        // Only as a child of the Response: never hidden in Extensions, another assertion or an Advice.
        if ((el.parentNode as unknown) !== (root as unknown)) throw new Error("assertion outside the Response's top level");
      }
      if (el.namespaceURI === DSIG && el.localName === "Signature") checkSignature(el);
      walk(el);
    }
  };
  walk(doc as unknown as Node);
  if (assertions !== 1) throw new Error(`${assertions} assertions`);
  return { inResponseTo: root.getAttribute("InResponseTo") || null, destination: root.getAttribute("Destination") || null };
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
