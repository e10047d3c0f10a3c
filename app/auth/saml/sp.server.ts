// Vestibule as a SAML 2.0 service provider, one per connection (ADR 153, 154), on
// @node-saml/node-saml configured strictly: signed assertions required, InResponseTo always
// checked against the requests stored in the database, an explicit audience and issuer, the
// connection's certificates only (never one from KeyInfo), 60 s of clock skew, SHA-256 or better.
// Around it: the raw shape checks of xml-guard.server.ts before, and after it the recipient, the
// destination, the one-use assertion id and the identity read from the signed assertion alone.
import { randomUUID } from "node:crypto";
import { DOMParser } from "@xmldom/xmldom";
import { SAML, ValidateInResponseTo, type Profile } from "@node-saml/node-saml";
import { validateCallbackUrl } from "../core/callback-url.server";
import { AuthError } from "../core/errors";
import { log } from "../core/log.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { clientSubject, countHit } from "../core/limits.server";
import { clientAddress, type AuthRequest } from "../core/request.server";
import { redirectResponse } from "../core/respond.server";
import { getSession } from "../core/session.server";
import { completeSignIn, failureResponse } from "../signin/flow.server";
import { findConnection, type SamlConnectionRow } from "./connections.server";
import { acsPath, metadataPath, SAML_METHOD } from "./paths";
import { provisionPerson } from "./provision.server";
import { findRequest, recordRequest, requestCache, SAML_REQUEST_MAX_AGE_MS, useAssertionOnce } from "./store.server";
import { spKeysOf, type SpKeyPair } from "./sp-keys.server";
import { decryptAssertion, guardAssertion, guardResponse, SAML_RESPONSE_MAX_BYTES } from "./xml-guard.server";

/** Clock skew accepted on every time of an assertion. */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** The longest an assertion id is remembered when its assertion names no end. */
const ASSERTION_ID_MAX_AGE_MS = 24 * 60 * 60_000;

const SAML_NS = "urn:oasis:names:tc:SAML:2.0:assertion";

/** The service provider's entity id (also the audience): its metadata URL. */
export const spEntityId = (origin: string, connectionId: string) => `${origin}${metadataPath(connectionId)}`;
export const acsUrl = (origin: string, connectionId: string) => `${origin}${acsPath(connectionId)}`;

function samlFor(connection: SamlConnectionRow, origin: string, solicited: boolean, keys: SpKeyPair | null = null): SAML {
  return new SAML({
    // Encrypted assertions (ADR 168): node-saml decrypts with the connection's own key, then
    // verifies the decrypted assertion's signature as for a plain one (wantAssertionsSigned).
    ...(keys ? { decryptionPvk: keys.privateKey } : {}),
    issuer: spEntityId(origin, connection.id),
    audience: spEntityId(origin, connection.id),
    callbackUrl: acsUrl(origin, connection.id),
    entryPoint: connection.ssoUrl,
    idpIssuer: connection.idpEntityId,
    idpCert: connection.certificates,
    wantAssertionsSigned: true,
    // The assertion's signature is required and is what the identity is read from; a signature on
    // the whole response is checked when present but not required (most IdPs sign the assertion).
    wantAuthnResponseSigned: false,
    // An unsolicited response is read only for a connection that allows IdP-initiated sign-in
    // (checked by the caller before this is built); every other response answers a stored request.
    validateInResponseTo: solicited ? ValidateInResponseTo.always : ValidateInResponseTo.never,
    cacheProvider: requestCache(connection.id),
    requestIdExpirationPeriodMs: SAML_REQUEST_MAX_AGE_MS,
    acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    signatureAlgorithm: "sha256",
    digestAlgorithm: "sha256",
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    generateUniqueId: () => `_${randomUUID()}`,
  });
}

/** The connection, when organizations are on (every /sso URL is 404 otherwise). */
export async function connectionFor(ar: AuthRequest, id: string | undefined): Promise<SamlConnectionRow | null> {
  if (!ar.config.organizations || !id) return null;
  return findConnection(id);
}

/** The connection's encryption key pair (made now for a connection older than ADR 168). */
function keysOf(ar: AuthRequest, connection: SamlConnectionRow): Promise<SpKeyPair | null> {
  return spKeysOf(connection.id, ar.config.secrets);
}

/**
 * GET /sso/<id>/metadata: the service provider's metadata XML, with its encryption certificate
 * (KeyDescriptor use="encryption") for IdPs that encrypt assertions.
 */
export async function metadataResponse(ar: AuthRequest, connection: SamlConnectionRow): Promise<Response> {
  const keys = await keysOf(ar, connection);
  const xml = samlFor(connection, ar.origin, true, keys).generateServiceProviderMetadata(keys?.certificate ?? null, null);
  return new Response(xml, { headers: { "Content-Type": "application/samlmetadata+xml; charset=utf-8", "Cache-Control": "no-store" } });
}

/**
 * GET /sso/<id>/signin?callbackUrl=…: SP-initiated sign-in. The AuthnRequest's id is stored with
 * the return address and the signed-in user (if any), and the browser goes to the IdP.
 */
export async function startSignIn(ar: AuthRequest, connection: SamlConnectionRow): Promise<Response> {
  const callbackUrl = validateCallbackUrl(ar.url.searchParams.get("callbackUrl") ?? "/", ar.origin) ?? `${ar.origin}/`;
  const { session } = await getSession(ar, { roll: false });
  const id = `_${randomUUID()}`;
  const saml = samlFor(connection, ar.origin, true);
  saml.options.generateUniqueId = () => id;
  await recordRequest({ id, connectionId: connection.id, userId: session?.userId ?? null, callbackUrl });
  const url = await saml.getAuthorizeUrlAsync("", ar.url.host, {});
  return redirectResponse(url);
}

type SignedFacts = { assertionId: string; recipient: string | null; subjectInResponseTo: string | null; expires: Date };

/** What the signed assertion (node-saml's verified copy) says about where and until when it holds. */
function signedFacts(profile: Profile): SignedFacts {
  const doc = new DOMParser().parseFromString(profile.getAssertionXml?.() ?? "", "text/xml");
  const assertion = doc.documentElement;
  if (!assertion || assertion.localName !== "Assertion" || assertion.namespaceURI !== SAML_NS) throw new Error("no signed assertion");
  const data = assertion.getElementsByTagNameNS(SAML_NS, "SubjectConfirmationData");
  if (data.length !== 1) throw new Error("not exactly one SubjectConfirmationData");
  const confirmation = data.item(0)!;
  const ends = [confirmation.getAttribute("NotOnOrAfter"), ...Array.from(assertion.getElementsByTagNameNS(SAML_NS, "Conditions")).map((c) => c.getAttribute("NotOnOrAfter"))]
    .filter((v): v is string => Boolean(v))
    .map((v) => Date.parse(v))
    .filter((v) => Number.isFinite(v));
  const now = Date.now();
  const end = ends.length ? Math.min(...ends) + SAML_CLOCK_SKEW_MS : now + ASSERTION_ID_MAX_AGE_MS;
  return {
    assertionId: assertion.getAttribute("ID") ?? "",
    recipient: confirmation.getAttribute("Recipient") || null,
    subjectInResponseTo: confirmation.getAttribute("InResponseTo") || null,
    expires: new Date(Math.min(end, now + ASSERTION_ID_MAX_AGE_MS)),
  };
}

function attribute(profile: Profile, name: string | undefined): string | null {
  if (!name) return null;
  const value = (profile.attributes as Record<string, unknown> | undefined)?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === "string" && first.trim() ? first.trim() : null;
}

/** A refusal: the reason to the log, the visitor to the sign-in page's generic error. */
class Refused extends Error {}

/**
 * The assertion consumer's limits (ADR 167), before the body is read: the client address's budget
 * first (a client over it stops charging the connection's), then the connection's. Over either,
 * the sign-in page's limit message (a RateLimited redirect with Retry-After).
 */
export async function acsRateLimited(ar: AuthRequest, connection: SamlConnectionRow): Promise<Response | null> {
  const refused =
    (await countHit(ar.config.rateLimits, "SAML_ACS_CLIENT", clientSubject(clientAddress(ar)))) ??
    (await countHit(ar.config.rateLimits, "SAML_ACS_CONNECTION", `saml-acs:${connection.id}`));
  if (!refused) return null;
  await recordEvent("rate-limited", { ...eventSource(ar), detail: { bucket: refused.limit } });
  return failureResponse(ar, new AuthError("RateLimited", { log: `SAML ACS limit ${refused.limit}`, retryAfterSeconds: refused.retryAfterSeconds, limit: refused.limit }), false);
}

/**
 * POST /sso/<id>/acs: the IdP's answer. No cookie is needed (the browser's cross-site POST
 * carries no SameSite=Lax cookie): the stored request the response answers binds it.
 */
export async function consumeAssertion(ar: AuthRequest, connection: SamlConnectionRow, samlResponse: unknown, relayState: unknown): Promise<Response> {
  try {
    if (typeof samlResponse !== "string" || samlResponse.length > Math.ceil((SAML_RESPONSE_MAX_BYTES * 4) / 3) + 4) throw new Refused("missing or too large SAMLResponse");
    const xml = Buffer.from(samlResponse, "base64").toString("utf8");
    const shape = guardResponse(xml);
    const keys = shape.encrypted ? await keysOf(ar, connection) : null;
    if (shape.encrypted && !keys) throw new Refused("encrypted assertion, and no key of this connection opens it");
    // The second wall inside the encryption too: the decrypted assertion gets the same shape
    // checks as a plain one (comments, processing instructions, duplicate ids, the signature's form).
    if (shape.encrypted) guardAssertion(await decryptAssertion(xml, keys!.privateKey));
    const acs = acsUrl(ar.origin, connection.id);
    if (shape.destination !== acs) throw new Refused("wrong destination");
    const stored = shape.inResponseTo ? await findRequest(shape.inResponseTo, connection.id) : null;
    if (shape.inResponseTo && !stored) throw new Refused("InResponseTo names no waiting request of this connection");
    if (!shape.inResponseTo && !connection.allowIdpInitiated) throw new Refused("unsolicited response; IdP-initiated sign-in is off");

    const { profile } = await samlFor(connection, ar.origin, stored !== null, keys).validatePostResponseAsync({ SAMLResponse: samlResponse });
    if (!profile) throw new Refused("no profile");
    if (profile.issuer !== connection.idpEntityId) throw new Refused("wrong issuer");
    const facts = signedFacts(profile);
    if (facts.recipient !== acs) throw new Refused("wrong recipient");
    if (stored && facts.subjectInResponseTo !== stored.id) throw new Refused("assertion does not answer the request");
    if (!stored && facts.subjectInResponseTo) throw new Refused("solicited assertion presented as unsolicited");
    if (!facts.assertionId || !(await useAssertionOnce(facts.assertionId, connection.id, facts.expires))) throw new Refused("assertion id already used");

    const subject = profile.nameID;
    if (!subject) throw new Refused("no NameID");
    const email = attribute(profile, connection.attributeMapping.email) ?? (connection.attributeMapping.email ? null : subject);
    const name = attribute(profile, connection.attributeMapping.name);
    const provisioned = await provisionPerson(connection, { subject, email, name }, stored?.userId ?? null);
    if (!provisioned.ok) {
      if (provisioned.reason === "not-linked") throw new AuthError("OAuthAccountNotLinked", { log: "SAML: an account with this address exists; its owner links it by signing in first" });
      throw new Refused(`provisioning: ${provisioned.reason}`);
    }
    const fromRelay = typeof relayState === "string" && relayState ? validateCallbackUrl(relayState, ar.origin) : null;
    const callbackUrl = stored?.callbackUrl ?? fromRelay ?? `${ar.origin}/`;
    return await completeSignIn({ ar, json: false, callbackUrl, setCookies: [], providerType: "oidc" }, SAML_METHOD, provisioned.result);
  } catch (error) {
    if (error instanceof AuthError) return failureResponse(ar, error, false);
    log("warn", "saml-refused", { connectionId: connection.id, reason: error instanceof Error ? error.message : String(error) });
    return failureResponse(ar, new AuthError("Callback", { log: "SAML response refused" }), false);
  }
}

/** The form body limit of the ACS: a 256 KB response, base64-encoded, and its RelayState. */
export const ACS_BODY_LIMIT = Math.ceil((SAML_RESPONSE_MAX_BYTES * 4) / 3) * 2 + 8192;
