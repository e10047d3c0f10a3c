// An authorization in progress, on Vestibule's own pages (ADR 134): the engine sends the browser
// to /oauth/consent/<uid>; from there the visitor signs in on Vestibule's sign-in page (every
// method, the second factor, their language) and comes back, proves who they are again on
// /auth/reauth when the app asked for prompt=login or max_age, then allows or denies the app on
// the consent page. Consent is remembered per user and client (the engine's Grant) and asked again
// for a scope not yet allowed; a first-party client is never asked.
//
// Only the browser that started the authorization can finish it: the engine's interaction cookie
// must name this uid. A browser without it — an e-mailed sign-in link opened in another browser —
// starts the same authorization again there rather than failing.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Grant, Interaction } from "oidc-provider";
import { recordEvent, eventSource } from "../accounts/audit.server";
import { notifySecurityChange } from "../accounts/security-notices.server";
import { readBody, BadRequestError, refusedBodyResponse } from "../core/body.server";
import { ensureCsrfToken, verifyCsrf } from "../core/csrf.server";
import { authRequest, type AuthRequest } from "../core/request.server";
import { redirectResponse } from "../core/respond.server";
import { isRecentAuth, reauthUrl } from "../core/recent-auth.server";
import { getSession, sessionAuthenticatedAt, type CurrentSession } from "../core/session.server";
import { db } from "../../db/client.server";
import { findClient } from "./clients.server";
import { authenticationOf, CONSENT_PATH, ENGINE_ROUTES, getEngine, OFFLINE_CONSENT_PARAM, PROVIDER_SCOPES } from "./engine.server";

export type ProviderScope = (typeof PROVIDER_SCOPES)[number];

export type ConsentPage = {
  uid: string;
  action: string;
  csrfToken: string;
  clientName: string;
  /** Where the app lives: its metadata document's host, else its redirect URI's. */
  clientHost: string;
  /** Where the answer (the code) goes when that is another host than clientHost: a document may name any redirect URI (ADR 177). */
  redirectHost: string | null;
  /** Registered by anyone (dynamic registration, a client ID metadata document): nobody vouched for it. */
  unverified: boolean;
  scopes: ProviderScope[];
  userEmail: string | null;
};

export type InteractionOutcome =
  | { type: "response"; response: Response }
  | { type: "page"; page: ConsentPage; setCookies: string[] }
  | { type: "gone" }
  /** The provider is off: the page does not exist. */
  | { type: "off" };

/** The engine's interaction cookie, checked the engine's way: a request made of the browser's cookies. */
function cookieRequest(request: Request): { req: IncomingMessage; res: ServerResponse } {
  const issuer = new URL(authRequest(request).origin);
  const req = {
    headers: { cookie: request.headers.get("cookie") ?? "", host: issuer.host, "x-forwarded-host": issuer.host, "x-forwarded-proto": issuer.protocol.slice(0, -1) },
    url: "/",
    method: "GET",
    socket: {},
  } as unknown as IncomingMessage;
  const res = { getHeader: () => undefined, setHeader: () => undefined, headersSent: false } as unknown as ServerResponse;
  return { req, res };
}

/** The interaction named by `uid` if this browser started it; "restart" when it exists but this browser has no cookie for it. */
async function interactionOf(request: Request, uid: string): Promise<{ interaction: Interaction } | { restart: Interaction } | null> {
  const { provider } = await getEngine();
  const stored = await provider.Interaction.find(uid);
  if (!stored) return null;
  const { req, res } = cookieRequest(request);
  const current = await provider.interactionDetails(req, res).catch(() => null);
  if (current && current.uid === uid) return { interaction: current };
  return { restart: stored };
}

/** The authorization request an interaction came from, to be made again in this browser. */
function restartUrl(ar: AuthRequest, interaction: Interaction): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(interaction.params)) {
    if (name === OFFLINE_CONSENT_PARAM) continue;
    if (typeof value === "string") params.set(name, value);
  }
  // The server added prompt=consent for offline_access; the restarted request adds it again itself.
  if (interaction.params[OFFLINE_CONSENT_PARAM] === "1" && typeof interaction.params.prompt === "string") {
    const prompt = interaction.params.prompt.split(" ").filter((p) => p !== "consent");
    if (prompt.length) params.set("prompt", prompt.join(" "));
    else params.delete("prompt");
  }
  return `${ar.origin}${ENGINE_ROUTES.authorization}?${params}`;
}

const pageOf = (uid: string) => `${CONSENT_PATH}/${uid}`;

function signInUrl(ar: AuthRequest, interaction: Interaction): string {
  const params = new URLSearchParams({ callbackUrl: pageOf(interaction.uid) });
  const hint = interaction.params.login_hint;
  if (typeof hint === "string" && hint.includes("@")) params.set("email", hint);
  return `${ar.origin}${ar.config.basePath}/signin?${params}`;
}

/** The row that remembers when an interaction sent the visitor to prove who they are again (ms since the epoch). */
const REAUTH_ASKED_KIND = "ReauthAsked";

/**
 * Whether the app's prompt=login, or a max_age the sign-in is older than, still needs the visitor
 * to prove who they are again: yes until the session's authentication is newer than the moment
 * this interaction first asked for it (kept beside the interaction, so a max_age of 0 or a sign-in
 * in the same second cannot loop, and a made-up query parameter cannot skip it).
 */
async function needsReauth(interaction: Interaction, authenticatedAt: Date, now: Date): Promise<boolean> {
  const maxAge = Number(interaction.params.max_age);
  const tooOld = interaction.params.max_age !== undefined && Number.isFinite(maxAge) && now.getTime() - authenticatedAt.getTime() > maxAge * 1000;
  if (!interaction.prompt.reasons.includes("login_prompt") && !tooOld) return false;
  const key = { kind_id: { kind: REAUTH_ASKED_KIND, id: interaction.uid } };
  const asked = await db().oAuthPayload.findUnique({ where: key, select: { payload: true } });
  if (asked && authenticatedAt.getTime() > Number(asked.payload)) return false;
  if (!asked) {
    await db().oAuthPayload.create({
      data: { kind: REAUTH_ASKED_KIND, id: interaction.uid, payload: String(now.getTime()), expiresAt: new Date(interaction.exp * 1000) },
    });
  }
  return true;
}

async function finish(request: Request, result: Record<string, unknown>): Promise<Response> {
  const { provider } = await getEngine();
  const { req, res } = cookieRequest(request);
  const returnTo = await provider.interactionResult(req, res, result, { mergeWithLastSubmission: true });
  return redirectResponse(returnTo);
}

async function factorsOf(session: CurrentSession): Promise<string[]> {
  if (!session.sessionId) return [];
  const row = await db().session.findUnique({ where: { id: session.sessionId }, select: { factors: true } });
  return row?.factors ? row.factors.split(" ") : [];
}

/** The scopes asked for that the consent page can name, in its order. */
function requestedScopes(interaction: Interaction): ProviderScope[] {
  const asked = new Set(typeof interaction.params.scope === "string" ? interaction.params.scope.split(" ") : []);
  return PROVIDER_SCOPES.filter((s) => asked.has(s));
}

function nothingNew(interaction: Interaction): boolean {
  const details = interaction.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
  const missing = (details.missingOIDCScope ?? []).length + (details.missingOIDCClaims ?? []).length + Object.keys(details.missingResourceScopes ?? {}).length;
  if (missing > 0) return false;
  const reasons = interaction.prompt.reasons;
  // An explicit prompt=consent from the app is honoured; the one the server added for offline_access is not.
  return !reasons.includes("consent_prompt") || interaction.params[OFFLINE_CONSENT_PARAM] === "1";
}

/** Allows what the interaction asks for: the grant (the remembered one, extended), saved; the engine goes on. */
async function allow(request: Request, ar: AuthRequest, interaction: Interaction, accountId: string): Promise<Response> {
  const { provider } = await getEngine();
  const clientId = String(interaction.params.client_id);
  const existing = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
  const grant: Grant = existing ?? new provider.Grant({ accountId, clientId });
  const scopes = requestedScopes(interaction).join(" ");
  if (scopes) grant.addOIDCScope(scopes);
  const details = interaction.prompt.details as { missingResourceScopes?: Record<string, string[]> };
  for (const [resource, list] of Object.entries(details.missingResourceScopes ?? {})) grant.addResourceScope(resource, list.join(" "));
  const first = (await db().oAuthPayload.count({ where: { kind: "Grant", accountId, clientId } })) === 0;
  const grantId = await grant.save();
  await recordEvent("oauth-consent", { userId: accountId, ...eventSource(ar), detail: { clientId, scope: scopes, first } });
  // The first grant to an app is a security notice (the owner is told, with "This wasn't me").
  if (first) {
    const client = await findClient(clientId);
    await notifySecurityChange(ar, accountId, { kind: "app-allowed", name: client?.name ?? clientId, host: clientHostOf(clientId, interaction) });
  }
  return finish(request, { consent: { grantId } });
}

/**
 * Where the app lives, as the consent page and the notice show it: its metadata document's host,
 * else its redirect URI's; null when it has neither (an app on a device): a client_id is no host.
 */
function clientHostOf(clientId: string, interaction: Interaction): string | null {
  // A client id that is a URL is a metadata document's (registered ids are random tokens); http:
  // only ever reaches here under the document fetcher's test seam.
  const documentUrl = URL.parse(clientId);
  if (documentUrl?.protocol === "https:" || documentUrl?.protocol === "http:") return documentUrl.host;
  return redirectHostOf(interaction);
}

/** The host the authorization's answer goes to: its redirect URI's (a private-use scheme: the scheme). */
function redirectHostOf(interaction: Interaction): string | null {
  const redirectUri = typeof interaction.params.redirect_uri === "string" ? URL.parse(interaction.params.redirect_uri) : null;
  return redirectUri?.host || redirectUri?.protocol.replace(/:$/, "") || null;
}

/** The page for GET /oauth/consent/<uid>: a redirect on, or the consent form. */
export async function interactionPage(request: Request, uid: string, now = new Date()): Promise<InteractionOutcome> {
  const ar = authRequest(request);
  if (!ar.config.provider) return { type: "off" };
  const found = await interactionOf(request, uid);
  if (!found) return { type: "gone" };
  if ("restart" in found) return { type: "response", response: redirectResponse(restartUrl(ar, found.restart)) };
  const { interaction } = found;
  const { session, setCookies } = await getSession(ar, { roll: false });
  if (!session) return { type: "response", response: redirectResponse(signInUrl(ar, interaction), { setCookies }) };
  // A device is approved only after a recent sign-in (ADR 171), whatever the engine asks for.
  if (interaction.deviceCode && !(await isRecentAuth(ar, session, { now }))) {
    return { type: "response", response: redirectResponse(reauthUrl(ar, pageOf(uid)), { setCookies }) };
  }

  if (interaction.prompt.name === "login") {
    const authenticated = (await sessionAuthenticatedAt(session, now)) ?? new Date(session.signedInAt * 1000);
    // Never older than the session's sign-in: the engine asks again for a login older than that
    // (the vestibule_session check), which would send the visitor round in a loop.
    const at = Math.max(Math.floor(authenticated.getTime() / 1000), session.signedInAt);
    if (await needsReauth(interaction, authenticated, now)) {
      return { type: "response", response: redirectResponse(reauthUrl(ar, pageOf(uid))) };
    }
    const { amr, acr } = authenticationOf(await factorsOf(session));
    return { type: "response", response: await finish(request, { login: { accountId: session.userId, ts: at, amr, acr, remember: true } }) };
  }

  // consent: the signed-in user must be the one the engine's session is for.
  const accountId = interaction.session?.accountId;
  if (accountId !== session.userId) {
    return { type: "response", response: redirectResponse(restartUrl(ar, interaction)) };
  }
  const clientId = String(interaction.params.client_id);
  const client = await findClient(clientId);
  // A device's "Allow" on /device was the decision: it is not asked a second time here (the
  // device confirmation page names the app and what it asks for).
  const asked = !(client?.firstParty || nothingNew(interaction) || interaction.deviceCode);
  // Allowing an app is a change and needs a recent sign-in (ADR 171), so a copied session cookie
  // cannot approve one; a sign-in made for this authorization is recent, so the usual flow asks
  // nothing more. A remembered consent or a first-party app in the code flow is a sign-in to an
  // app already allowed and goes on (a device never gets here unless recent: see above). The
  // visitor comes back to this page, the interaction intact.
  if (asked && !(await isRecentAuth(ar, session, { now }))) {
    return { type: "response", response: redirectResponse(reauthUrl(ar, pageOf(uid)), { setCookies }) };
  }
  if (!asked) return { type: "response", response: await allow(request, ar, interaction, accountId) };

  const { token, setCookie } = ensureCsrfToken(ar);
  return {
    type: "page",
    setCookies: [...setCookies, ...(setCookie ? [setCookie] : [])],
    page: {
      uid,
      action: pageOf(uid),
      csrfToken: token,
      clientName: client?.name ?? clientId,
      clientHost: clientHostOf(clientId, interaction) ?? "",
      redirectHost: redirectHostOf(interaction) !== clientHostOf(clientId, interaction) ? redirectHostOf(interaction) : null,
      unverified: !client || client.source === "registration",
      scopes: requestedScopes(interaction),
      userEmail: session.data.user.email,
    },
  };
}

/** POST /oauth/consent/<uid>: Allow or Deny, by the signed-in user the authorization is for. */
export async function interactionAction(request: Request, uid: string): Promise<InteractionOutcome> {
  const ar = authRequest(request);
  if (!ar.config.provider) return { type: "off" };
  let body: Record<string, unknown>;
  try {
    body = await readBody(request);
  } catch (error) {
    if (error instanceof BadRequestError) return { type: "response", response: refusedBodyResponse(error) };
    throw error;
  }
  const found = await interactionOf(request, uid);
  if (!found) return { type: "gone" };
  if ("restart" in found) return { type: "response", response: redirectResponse(restartUrl(ar, found.restart)) };
  const { interaction } = found;
  if (!verifyCsrf(ar, body.csrfToken)) return { type: "response", response: redirectResponse(pageOf(uid)) };
  const { session } = await getSession(ar, { roll: false });
  if (!session) return { type: "response", response: redirectResponse(signInUrl(ar, interaction)) };
  if (interaction.prompt.name !== "consent" || interaction.session?.accountId !== session.userId) {
    return { type: "response", response: redirectResponse(pageOf(uid)) };
  }
  if (body.decision === "allow") {
    // Allowing is a change (ADR 171): a copied session cookie alone cannot approve an app.
    if (!(await isRecentAuth(ar, session))) return { type: "response", response: redirectResponse(reauthUrl(ar, pageOf(uid))) };
    return { type: "response", response: await allow(request, ar, interaction, session.userId) };
  }
  return {
    type: "response",
    response: await finish(request, { error: "access_denied", error_description: "The user denied the request." }),
  };
}
