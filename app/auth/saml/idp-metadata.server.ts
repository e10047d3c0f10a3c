// An identity provider's SAML metadata (ADR 167): pasted as XML or fetched from its URL, read for
// the three things a connection needs — the entity id, the single sign-on URL of the HTTP-Redirect
// binding, and every signing certificate. The same XML stack as the responses (@xmldom/xmldom) and
// the same refusals of DTDs and entities; the URL is fetched under the guard every fetch of a URL
// someone else named goes through (core/public-fetch.server.ts).
import { DOMParser } from "@xmldom/xmldom";
import { fetchPublic, PublicFetchError, type PublicFetchSeam } from "../core/public-fetch.server";
import { normalizeCertificate } from "./certificates.server";

/** Metadata larger than this is refused (a real IdP's is a few KB; a federation's is not one IdP). */
export const IDP_METADATA_MAX_BYTES = 256 * 1024;
export const IDP_METADATA_TIMEOUT_MS = 5_000;
/** At most this many signing certificates are taken (as for a connection's list). */
export const IDP_METADATA_MAX_CERTIFICATES = 5;

const MD = "urn:oasis:names:tc:SAML:2.0:metadata";
const DSIG = "http://www.w3.org/2000/09/xmldsig#";
const REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";

/** Why metadata was not accepted; each has its own sentence on the page and the command line. */
export type IdpMetadataFailure =
  | "too-large"
  | "not-xml"
  | "doctype"
  | "not-idp-metadata"
  | "several-idps"
  | "no-entity-id"
  | "no-redirect-sso"
  | "no-signing-certificate"
  | "bad-certificate"
  | "fetch-url"
  | "fetch-address"
  | "fetch-failed"
  | "fetch-timeout";

export class IdpMetadataError extends Error {
  constructor(
    readonly reason: IdpMetadataFailure,
    detail?: string,
  ) {
    super(detail ? `${reason}: ${detail}` : reason);
    this.name = "IdpMetadataError";
  }
}

export type IdpMetadata = { entityId: string; ssoUrl: string; certificates: string[] };

const ELEMENT = 1;
const DOCUMENT_TYPE = 10;

function childElements(el: Element, ns: string, localName: string): Element[] {
  const out: Element[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === ELEMENT && (c as Element).namespaceURI === ns && (c as Element).localName === localName) out.push(c as Element);
  }
  return out;
}

/** Reads pasted or fetched metadata; throws IdpMetadataError naming what is wrong. */
export function parseIdpMetadata(xml: string): IdpMetadata {
  if (Buffer.byteLength(xml, "utf8") > IDP_METADATA_MAX_BYTES) throw new IdpMetadataError("too-large");
  // No DTD, so no entity of any kind (internal, external, parameter): refused before parsing, as
  // for responses (xml-guard.server.ts); xmldom would otherwise read an internal subset.
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new IdpMetadataError("doctype");
  const problems: string[] = [];
  const doc = new DOMParser({
    errorHandler: { warning: () => {}, error: (m: string) => problems.push(m), fatalError: (m: string) => problems.push(m) },
  }).parseFromString(xml.trim(), "text/xml");
  if (problems.length || !doc.documentElement) throw new IdpMetadataError("not-xml", problems[0]);
  for (let c = doc.firstChild; c; c = c.nextSibling) if (c.nodeType === DOCUMENT_TYPE) throw new IdpMetadataError("doctype");

  const root = doc.documentElement as unknown as Element;
  let entities: Element[];
  if (root.namespaceURI === MD && root.localName === "EntityDescriptor") entities = [root];
  else if (root.namespaceURI === MD && root.localName === "EntitiesDescriptor") entities = childElements(root, MD, "EntityDescriptor");
  else throw new IdpMetadataError("not-idp-metadata");
  const idps = entities.filter((e) => childElements(e, MD, "IDPSSODescriptor").length > 0);
  if (idps.length === 0) throw new IdpMetadataError("not-idp-metadata");
  if (idps.length > 1) throw new IdpMetadataError("several-idps");
  const entity = idps[0]!;
  const entityId = (entity.getAttribute("entityID") ?? "").trim();
  if (!entityId || entityId.length > 1024) throw new IdpMetadataError("no-entity-id");
  const descriptor = childElements(entity, MD, "IDPSSODescriptor")[0]!;

  const sso = childElements(descriptor, MD, "SingleSignOnService").find((s) => s.getAttribute("Binding") === REDIRECT_BINDING);
  const ssoUrl = (sso?.getAttribute("Location") ?? "").trim();
  if (!/^https?:\/\//i.test(ssoUrl) || !URL.canParse(ssoUrl)) throw new IdpMetadataError("no-redirect-sso");

  // Signing keys: a KeyDescriptor with use="signing" or with no use (both, per the metadata spec).
  const texts: string[] = [];
  for (const key of childElements(descriptor, MD, "KeyDescriptor")) {
    const use = key.getAttribute("use");
    if (use && use !== "signing") continue;
    for (const info of childElements(key, DSIG, "KeyInfo")) {
      for (const data of childElements(info, DSIG, "X509Data")) {
        for (const cert of childElements(data, DSIG, "X509Certificate")) texts.push(cert.textContent ?? "");
      }
    }
  }
  if (texts.length === 0) throw new IdpMetadataError("no-signing-certificate");
  let certificates: string[];
  try {
    certificates = [...new Set(texts.map((text) => normalizeCertificate(text)))];
  } catch {
    throw new IdpMetadataError("bad-certificate");
  }
  if (certificates.length > IDP_METADATA_MAX_CERTIFICATES) certificates = certificates.slice(0, IDP_METADATA_MAX_CERTIFICATES);
  return { entityId, ssoUrl, certificates };
}

let seam: PublicFetchSeam | null = null;

/** Tests only (refused in production): fetch through a local server; see PublicFetchSeam. */
export function setIdpMetadataFetchTestSeam(next: PublicFetchSeam | null) {
  if (next && process.env.NODE_ENV === "production") throw new Error("The IdP metadata fetch test seam is not available in production");
  seam = next;
}

/** Fetches and reads the metadata at `url`: https only, public addresses only, no redirect, 5 s, 256 KB. */
export async function fetchIdpMetadata(url: string): Promise<IdpMetadata> {
  let body: Buffer;
  try {
    ({ body } = await fetchPublic(url.trim(), {
      maxBytes: IDP_METADATA_MAX_BYTES,
      timeoutMs: IDP_METADATA_TIMEOUT_MS,
      accept: "application/samlmetadata+xml, application/xml;q=0.9, text/xml;q=0.8",
      userAgent: "Vestibule (SAML metadata fetcher)",
      seam,
    }));
  } catch (error) {
    if (!(error instanceof PublicFetchError)) throw error;
    if (error.reason === "invalid_url") throw new IdpMetadataError("fetch-url");
    if (error.reason === "forbidden_address") throw new IdpMetadataError("fetch-address", error.message);
    if (error.reason === "too_large") throw new IdpMetadataError("too-large");
    if (error.reason === "timeout") throw new IdpMetadataError("fetch-timeout");
    throw new IdpMetadataError("fetch-failed", error.message);
  }
  return parseIdpMetadata(body.toString("utf8"));
}
