// Vestibule as a SAML 2.0 service provider, one per connection (ADR 153, 154), on
// @node-saml/node-saml configured strictly: signed assertions required, InResponseTo always
// checked against the requests stored in the database, an explicit audience and issuer, the
// connection's certificates only (never one from KeyInfo), 60 s of clock skew, SHA-256 or better.
// Around it: the raw shape checks of xml-guard.server.ts before, and after it the recipient, the
// destination, the one-use assertion id and the identity read from the signed assertion alone.
// A solicited answer then signs in only the browser that started the request (ADR 154, amended): the ACS
// stores a one-use ticket and sends the browser to GET /sso/<id>/finish, which needs the binding
// cookie set at the start.
import { randomUUID } from "node:crypto";
import { DOMParser } from "@xmldom/xmldom";
import { SAML, ValidateInResponseTo, type Profile } from "@node-saml/node-saml";
import { validateCallbackUrl } from "../core/callback-url.server";
import { expireCookie, serializeCookie } from "../core/cookies.server";
import { constantTimeEqual, randomToken, sha256hex } from "../core/crypto.server";
import { AuthError } from "../core/errors";
import { log } from "../core/log.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { clientSubject, countHit } from "../core/limits.server";
import { clientAddress, type AuthRequest } from "../core/request.server";
import { redirectResponse } from "../core/respond.server";
import { getSession } from "../core/session.server";
import { completeSignIn, failureResponse } from "../signin/flow.server";
import { findConnection, type SamlConnectionRow } from "./connections.server";
import { acsPath, finishPath, metadataPath, SAML_METHOD } from "./paths";
import { provisionPerson } from "./provision.server";
import { findRequest, recordRequest, recordTicket, requestCache, SAML_REQUEST_MAX_AGE_MS, takeTicket, useAssertionOnce, type TicketPerson } from "./store.server";
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

/** A binding cookie's value as this app writes it (randomToken(32): 43 base64url characters). */
const BINDING_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The browser's binding value: the one it already holds (a second tab's sign-in must not strand the
 * first's), or a new one. Host-only, HttpOnly, SameSite=Lax (__Host- on https): a top-level GET
 * navigation carries it, the IdP's cross-site POST does not, and no sibling host can plant it.
 */
function bindingOf(ar: AuthRequest): { value: string; cookie: string } {
  const held = ar.cookies.get(ar.names.samlBinding);
  const value = held && BINDING_SHAPE.test(held) ? held : randomToken(32);
  return { value, cookie: serializeCookie(ar.names.samlBinding, value, { secure: ar.secure, maxAge: Math.ceil(SAML_REQUEST_MAX_AGE_MS / 1000) }) };
}

/**
 * GET /sso/<id>/signin?callbackUrl=…: SP-initiated sign-in. The AuthnRequest's id is stored with
 * the return address, the signed-in user (if any) and the hash of this browser's binding cookie,
 * and the browser goes to the IdP.
 */
export async function startSignIn(ar: AuthRequest, connection: SamlConnectionRow): Promise<Response> {
  const callbackUrl = validateCallbackUrl(ar.url.searchParams.get("callbackUrl") ?? "/", ar.origin) ?? `${ar.origin}/`;
  const { session } = await getSession(ar, { roll: false });
  const id = `_${randomUUID()}`;
  const saml = samlFor(connection, ar.origin, true);
  saml.options.generateUniqueId = () => id;
  const binding = bindingOf(ar);
  await recordRequest({ id, connectionId: connection.id, userId: session?.userId ?? null, callbackUrl, bindingHash: sha256hex(binding.value) });
  const url = await saml.getAuthorizeUrlAsync("", ar.url.host, {});
  return redirectResponse(url, { setCookies: [binding.cookie] });
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
 * carries no SameSite=Lax cookie): the stored request the response answers binds it to this
 * connection. A solicited answer signs nobody in here: it becomes a one-use ticket, and the
 * browser goes (303, a GET) to the finish step, where the binding cookie must match (ADR 154, amended).
 * An unsolicited answer (IdP-initiated, when the connection allows it) signs in here: it has no
 * browser to be bound to, and stays open to login CSRF by design (ADR 154).
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
    if (stored && !stored.bindingHash) throw new Refused("request bound to no browser (started before the binding cookie existed)");
    if (!facts.assertionId || !(await useAssertionOnce(facts.assertionId, connection.id, facts.expires))) throw new Refused("assertion id already used");

    const subject = profile.nameID;
    if (!subject) throw new Refused("no NameID");
    const email = attribute(profile, connection.attributeMapping.email) ?? (connection.attributeMapping.email ? null : subject);
    const name = attribute(profile, connection.attributeMapping.name);
    const person: TicketPerson = { subject, email, name };
    if (stored) {
      const ticket = randomToken(32);
      await recordTicket(sha256hex(ticket), connection.id, { requestId: stored.id, bindingHash: stored.bindingHash!, userId: stored.userId, callbackUrl: stored.callbackUrl, person });
      return new Response(null, { status: 303, headers: { Location: `${ar.origin}${finishPath(connection.id)}?ticket=${ticket}`, "Cache-Control": "no-store" } });
    }
    const fromRelay = typeof relayState === "string" && relayState ? validateCallbackUrl(relayState, ar.origin) : null;
    return await signInPerson(ar, connection, person, null, fromRelay ?? `${ar.origin}/`, []);
  } catch (error) {
    return refusal(ar, connection, error, []);
  }
}

/** The sign-in page's answer to a refusal: an AuthError's own code, every other reason logged and "Callback". */
function refusal(ar: AuthRequest, connection: SamlConnectionRow, error: unknown, setCookies: string[]): Response {
  if (error instanceof AuthError) return failureResponse(ar, error, false, setCookies);
  log("warn", "saml-refused", { connectionId: connection.id, reason: error instanceof Error ? error.message : String(error) });
  return failureResponse(ar, new AuthError("Callback", { log: "SAML response refused" }), false, setCookies);
}

/** Provisions the person a validated assertion names (ADR 155) and signs them in. */
async function signInPerson(ar: AuthRequest, connection: SamlConnectionRow, person: TicketPerson, startedBy: string | null, callbackUrl: string, setCookies: string[]): Promise<Response> {
  const provisioned = await provisionPerson(connection, person, startedBy);
  if (!provisioned.ok) {
    if (provisioned.reason === "not-linked") throw new AuthError("OAuthAccountNotLinked", { log: "SAML: an account with this address exists; its owner links it by signing in first" });
    throw new Refused(`provisioning: ${provisioned.reason}`);
  }
  return completeSignIn({ ar, json: false, callbackUrl, setCookies, providerType: "oidc" }, SAML_METHOD, provisioned.result);
}

/**
 * GET /sso/<id>/finish?ticket=…: the browser the ACS sent here. The ticket is taken (one use, on
 * any instance); the sign-in completes only when this browser's binding cookie is the one the
 * answered request was started with — another browser (a login-CSRF victim made to post the
 * attacker's answer, or to open the attacker's ticket) gets the generic error and no session.
 * The binding cookie is cleared either way.
 */
export async function finishSignIn(ar: AuthRequest, connection: SamlConnectionRow): Promise<Response> {
  const clear = [expireCookie(ar.names.samlBinding, ar.secure)];
  try {
    const raw = ar.url.searchParams.get("ticket") ?? "";
    if (!BINDING_SHAPE.test(raw)) throw new Refused("finish without a well-formed ticket");
    const ticket = await takeTicket(sha256hex(raw), connection.id);
    if (!ticket) throw new Refused("ticket unknown, used, expired or another connection's");
    const held = ar.cookies.get(ar.names.samlBinding);
    if (!held || !constantTimeEqual(sha256hex(held), ticket.bindingHash)) throw new Refused("binding cookie does not match the browser that started the request");
    return await signInPerson(ar, connection, ticket.person, ticket.userId, ticket.callbackUrl, clear);
  } catch (error) {
    return refusal(ar, connection, error, clear);
  }
}

/** The form body limit of the ACS: a 256 KB response, base64-encoded, and its RelayState. */
export const ACS_BODY_LIMIT = Math.ceil((SAML_RESPONSE_MAX_BYTES * 4) / 3) * 2 + 8192;
