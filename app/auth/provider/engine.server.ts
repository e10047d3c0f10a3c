// Vestibule as an OAuth 2.1 authorization server and OpenID provider (docs/features/provider.md):
// panva's certified `oidc-provider` configured and mounted by the server before React Router's
// listener (server/main.ts in production, scripts/dev-bootstrap.ts under `npm run dev`). The
// engine speaks the protocol; Vestibule supplies the rest: storage on its database
// (adapter.server.ts), signing keys (signing-keys.server.ts), clients (clients.server.ts), the
// sign-in and consent pages (interaction.server.ts, /oauth/consent/<uid>) and the user's claims.
//
// The library's traps, closed here (ADR 133): its development interactions and in-memory storage
// are never used (the start refuses them: assertEngineSafe); PKCE S256 is required of every
// client; `offline_access` is kept on consent alone, without the client having to send
// prompt=consent; the engine's own session is only believed while the Vestibule session it was
// made from lives (the `vestibule_session` login check); every ID token carries `sid`, and
// back-channel logout tokens come from Vestibule's queue when any session ends, never from the
// engine's own inline send (ADR 145).
import { hkdfSync } from "node:crypto";
import { decodeJwt } from "jose";
import type { IncomingMessage, ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import type { Configuration, KoaContextWithOIDC } from "oidc-provider";
import { engineLibrary } from "./library.server";
import { selectClientAddress } from "../core/client-address.server";
import { getConfig, normalizeResource, type ProviderConfig } from "../core/config.server";
import { log } from "../core/log.server";
import { GRANT_ID_CLAIM } from "./bearer.server";
import { countOAuthToken } from "../core/metrics.server";
import { retryAfterMinutes } from "../core/limit-table";
import { clientSubject, countHit } from "../core/limits.server";
import { openAtRest, sealAtRest } from "../core/sealed-at-rest.server";
import { authRequest } from "../core/request.server";
import { isRecentAuth } from "../core/recent-auth.server";
import { endSession, getSession, type CurrentSession } from "../core/session.server";
import { db } from "../../db/client.server";
import { PrismaAdapter, REFRESH_ANSWER_KIND, REPLAY_STATE, removeGrantRows } from "./adapter.server";
import { markIdTokenIssued, recordSessionApp } from "./backchannel.server";
import { pairwiseSubject } from "./pairwise.server";
import { pollTooSoon } from "./device-poll.server";
import { findAccountRow, releaseConsumed, tokenRowId, type PayloadRow } from "./payload-store.server";
import { stageTokenWrites, writeStagedTokens } from "./token-writes.server";
import { isFirstParty } from "./clients.server";
import { continueToClientPage, deviceSuccessPage, deviceTooManyPage, errorPage, logoutDonePage, logoutPage, userCodeConfirmPage, userCodeInputPage } from "./pages.server";
import {
  AUTHORIZATION_CODE_TTL,
  DEVICE_CODE_TTL,
  DEVICE_POLL_INTERVAL,
  GRANT_TTL,
  ID_TOKEN_TTL,
  INTERACTION_TTL,
  LOGOUT_TOKEN_TTL,
  REFRESH_TOKEN_ABSOLUTE_TTL,
  REFRESH_TOKEN_IDLE_TTL,
} from "./lifetimes.server";
import { issuerUrl, privateJwksForEngine } from "./signing-keys.server";
import { PROVIDER_SCOPES } from "./scopes";

/** The engine's endpoints (everything under /oauth/, and the two metadata URLs). */
export const ENGINE_ROUTES = {
  authorization: "/oauth/authorize",
  token: "/oauth/token",
  userinfo: "/oauth/userinfo",
  jwks: "/oauth/jwks",
  revocation: "/oauth/revoke",
  introspection: "/oauth/introspect",
  registration: "/oauth/register",
  device_authorization: "/oauth/device_authorization",
  end_session: "/oauth/end_session",
  code_verification: "/device",
} as const;
/** Vestibule's own page for an authorization in progress: sign-in, then consent (interaction.server.ts). */
export const CONSENT_PATH = "/oauth/consent";
export const OPENID_CONFIGURATION_PATH = "/.well-known/openid-configuration";
export const AUTHORIZATION_SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server";
export { PROVIDER_SCOPES } from "./scopes";
/** The scope of an authorization request that names none (OAuth 2.1 section 3.2.2.1; ADR 181). */
export const DEFAULT_SCOPE = "openid";

/** An authorization parameter the server adds when it keeps `offline_access` for a client that sent no prompt=consent. */
export const OFFLINE_CONSENT_PARAM = "vestibule_offline";
/** How long the loser of a refresh race waits for the winner's answer, at most. */
const REFRESH_ANSWER_WAIT_MS = 5_000;
const REFRESH_ANSWER_POLL_MS = 25;

/** The engine's long-lived cookies (its session): the same options where they are set and cleared. */
const LONG_COOKIE = { httpOnly: true, sameSite: "lax" } as const;

/** Whether a request path is the engine's to answer (while the provider is on). */
export function isEnginePath(pathname: string): boolean {
  if (!getConfig().provider) return false;
  if (pathname === OPENID_CONFIGURATION_PATH || pathname === AUTHORIZATION_SERVER_METADATA_PATH) return true;
  if (pathname === ENGINE_ROUTES.code_verification || pathname.startsWith(`${ENGINE_ROUTES.code_verification}/`)) return true;
  return pathname.startsWith("/oauth/") && pathname !== CONSENT_PATH && !pathname.startsWith(`${CONSENT_PATH}/`);
}

/** The engine's cookie keys: one per AUTH_SECRET value, derived for this purpose only (the first signs). */
function cookieKeys(secrets: readonly string[]): string[] {
  return secrets.map((secret) => Buffer.from(hkdfSync("sha256", secret, "oauth-provider-cookies", "Vestibule OAuth provider cookie key", 32)).toString("hex"));
}

/** What of an engine request Vestibule's session code reads: its cookies, device and address. */
function vestibuleHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const name of ["cookie", "user-agent", "accept-language", "x-vestibule-remote-addr", "x-forwarded-for"]) {
    const value = req.headers[name];
    if (typeof value === "string") headers.set(name, value);
  }
  return headers;
}

/** The Vestibule session of the browser behind an engine request (its cookies), or null. */
export async function vestibuleSessionOf(req: IncomingMessage): Promise<CurrentSession | null> {
  const request = new Request(`${issuerUrl()}/oauth/authorize`, { headers: vestibuleHeaders(req) });
  const { session } = await getSession(authRequest(request), { roll: false });
  return session;
}

type EngineClient = { clientId: string; subjectType?: string; sectorIdentifier?: string; backchannelLogoutUri?: string };

/** The `sub` a client sees for a user: pairwise per sector when the client has pairwise subjects (ADR 163), else the user's id. */
export async function subjectFor(client: EngineClient, userId: string): Promise<string> {
  return client.subjectType === "pairwise" && client.sectorIdentifier ? pairwiseSubject(client.sectorIdentifier, userId) : userId;
}

/**
 * A code (or a device's confirmation) was just issued in a browser's Vestibule session: the app is
 * recorded in that session, to be told when it ends (back-channel logout, ADR 145).
 */
async function recordAppOfSession(ctx: KoaContextWithOIDC): Promise<void> {
  const entities = ctx.oidc.entities as Record<string, { sid?: string; sessionUid?: string; accountId?: string; scope?: string } | undefined>;
  const code = entities.AuthorizationCode ?? entities.DeviceCode;
  const client = ctx.oidc.client as EngineClient | undefined;
  if (!code?.sid || !client?.backchannelLogoutUri) return;
  const session = await vestibuleSessionOf(ctx.req);
  if (!session?.sessionId) return;
  await recordSessionApp({ code, client, sessionId: session.sessionId, userId: session.userId, sub: await subjectFor(client, session.userId) });
}

/**
 * RP-initiated logout without the question (ADR 162): a valid, unexpired id_token_hint whose `sid`
 * is the engine's sid for that client in this browser's session, while the Vestibule session it
 * came from lives, is the app asking for the sign-out it may ask for. Vestibule's session ends
 * (its apps are told), then the engine's as the confirmed question ends it, and the browser goes
 * to the registered post_logout_redirect_uri with `state`. False: the question is asked.
 */
async function signOutWithoutAsking(ctx: KoaContextWithOIDC): Promise<boolean> {
  const hint = (ctx.oidc.entities.IdTokenHint as { payload?: { sid?: unknown; exp?: unknown } } | undefined)?.payload;
  const client = ctx.oidc.client;
  const session = ctx.oidc.session;
  if (!hint || !client || !session?.accountId) return false;
  if (typeof hint.exp !== "number" || hint.exp * 1000 <= Date.now()) return false;
  const sid = session.sidFor(client.clientId);
  if (!sid || hint.sid !== sid) return false;
  const vestibule = await vestibuleSessionOf(ctx.req);
  if (!vestibule || vestibule.userId !== session.accountId || (session.loginTs ?? 0) < vestibule.signedInAt) return false;
  const ended = await endSession(authRequest(new Request(`${issuerUrl()}${ENGINE_ROUTES.end_session}`, { headers: vestibuleHeaders(ctx.req) })));
  for (const cookie of ended.setCookies) ctx.append("Set-Cookie", cookie);
  // What the engine's confirmed logout does: grants that do not outlive the session go with it.
  for (const authorization of Object.values(session.authorizations ?? {})) {
    if (authorization.grantId && !authorization.persistsLogout) await removeGrantRows(authorization.grantId);
  }
  const { state, postLogoutRedirectUri } = (session.state ?? {}) as { state?: string; postLogoutRedirectUri?: string };
  await session.destroy();
  ctx.cookies.set(ctx.oidc.provider.cookieName("session"), null, LONG_COOKIE);
  const target = new URL(postLogoutRedirectUri ?? ctx.oidc.urlFor("end_session_success"));
  if (postLogoutRedirectUri && state != null) target.searchParams.set("state", state);
  ctx.status = 303;
  ctx.redirect(target.href);
  return true;
}

/**
 * The "Sign out?" question, naming the account and the app that asked. A visitor signed in
 * nowhere is not asked: they are told they are signed out, or sent straight on to the app's
 * post_logout_redirect_uri (the engine has checked it is registered for that client) with `state`.
 */
async function askSignOut(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  const vestibule = await vestibuleSessionOf(ctx.req);
  if (!vestibule && !ctx.oidc.session?.accountId) {
    const { state, postLogoutRedirectUri } = (ctx.oidc.session?.state ?? {}) as { state?: string; postLogoutRedirectUri?: string };
    if (postLogoutRedirectUri && ctx.oidc.client) {
      const target = new URL(postLogoutRedirectUri);
      if (state != null) target.searchParams.set("state", state);
      ctx.status = 303;
      ctx.redirect(target.href);
      return;
    }
    ctx.status = 200;
    await logoutDonePage(ctx);
    return;
  }
  const client = ctx.oidc.client as { clientName?: string } | undefined;
  await logoutPage(ctx, form, { email: vestibule?.data.user.email ?? null, app: client?.clientName ?? null });
}

/**
 * Whether an id_token_hint is one of this provider's ID tokens for a known client, signature
 * checked (its expiry is not: signOutWithoutAsking reads it). A hint that is not is left out, so
 * the visitor is asked rather than shown an error (ADR 162).
 */
async function hintIsValid(provider: Provider, hint: string): Promise<boolean> {
  try {
    const aud = decodeJwt(hint).aud;
    const clientId = Array.isArray(aud) ? aud[0] : aud;
    if (typeof clientId !== "string") return false;
    const client = await provider.Client.find(clientId);
    if (!client) return false;
    await provider.IdToken.validate(hint, client);
    return true;
  } catch {
    return false;
  }
}

/** Whether the browser behind an engine request proved who it is within AUTH_REAUTH_MAX_AGE. */
async function recentSignInOf(req: IncomingMessage): Promise<boolean> {
  const ar = authRequest(new Request(`${issuerUrl()}/device`, { headers: vestibuleHeaders(req) }));
  const { session } = await getSession(ar, { roll: false });
  return session !== null && (await isRecentAuth(ar, session));
}

/** What the ID token says about how the user signed in (RFC 8176 `amr`, and `acr` as aal1/aal2). */
export function authenticationOf(factors: readonly string[]): { amr: string[]; acr: "aal1" | "aal2" } {
  const known = new Set(["pwd", "otp", "hwk", "swk", "mfa", "email"]);
  return { amr: factors.filter((f) => known.has(f)), acr: factors.includes("mfa") ? "aal2" : "aal1" };
}

async function findAccount(_ctx: KoaContextWithOIDC, sub: string) {
  // On the driver (payload-store.server.ts): read on every token request.
  const user = await findAccountRow(sub);
  // A disabled or deleted user gets no token, no userinfo, no refresh.
  if (!user || user.disabled) return undefined;
  return {
    accountId: sub,
    claims: async () => ({
      sub,
      ...(user.email ? { email: user.email, email_verified: user.emailVerified } : {}),
      ...(user.name ? { name: user.name } : {}),
    }),
  };
}

/**
 * The grant the engine checks the request against: the one consent just made, else the user's
 * remembered grant for this client (consent is remembered per user and client, and asked again
 * for a scope it does not cover); a first-party client's users are never asked.
 */
async function loadExistingGrant(ctx: KoaContextWithOIDC) {
  const { oidc } = ctx;
  const accountId = oidc.session?.accountId;
  const client = oidc.client;
  if (!accountId || !client) return undefined;
  const provider = oidc.provider;
  const fromConsent = oidc.result?.consent?.grantId;
  if (fromConsent) return provider.Grant.find(fromConsent);
  const row = await db().oAuthPayload.findFirst({
    where: { kind: "Grant", accountId, clientId: client.clientId, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] },
    orderBy: { createdAt: "desc" },
    select: { id: true },
  });
  const remembered = row ? await provider.Grant.find(row.id) : undefined;
  if (!(await isFirstParty(client.clientId))) return remembered;
  const grant = remembered ?? new provider.Grant({ clientId: client.clientId, accountId });
  grant.addOIDCScope([...oidc.requestParamScopes].join(" "));
  await grant.save();
  return grant;
}

/** The resources a token may be for, normalised; anything else is invalid_target. */
function resourceServerInfo(settings: ProviderConfig) {
  return async (_ctx: KoaContextWithOIDC, indicator: string) => {
    const resource = normalizeResource(indicator);
    if (!resource || !settings.resources.includes(resource)) throw new (engineLibrary().errors.InvalidTarget!)();
    return {
      audience: resource,
      scope: "openid email profile offline_access",
      accessTokenTTL: settings.accessTokenTtl,
      accessTokenFormat: "jwt",
      jwt: { sign: { alg: "RS256" } },
    };
  };
}

function configuration(settings: ProviderConfig, jwks: { keys: unknown[] }): Configuration {
  const { interactionPolicy } = engineLibrary();
  const policy = interactionPolicy.base();
  // The engine's session is believed only while the Vestibule session it came from lives: after a
  // sign-out (or the session's end by any other way) the user signs in on Vestibule again.
  policy.get("login")!.checks.add(
    new interactionPolicy.Check("vestibule_session", "the Vestibule session has ended or changed", "login_required", async (ctx) => {
      const accountId = ctx.oidc.session?.accountId;
      if (!accountId) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
      const session = await vestibuleSessionOf(ctx.req);
      if (!session || session.userId !== accountId) return interactionPolicy.Check.REQUEST_PROMPT;
      if ((ctx.oidc.session?.loginTs ?? 0) < session.signedInAt) return interactionPolicy.Check.REQUEST_PROMPT;
      return interactionPolicy.Check.NO_NEED_TO_PROMPT;
    }),
  );
  // A device is approved only after a recent sign-in (ADR 171): whoever holds the device gets the
  // tokens, so even a remembered consent or a first-party app goes by Vestibule's page, which
  // sends an old session through /auth/reauth first.
  policy.get("login")!.checks.add(
    new interactionPolicy.Check("vestibule_recent_device", "approving a device needs a recent sign-in", "login_required", async (ctx) => {
      if (!ctx.oidc.deviceCode || !ctx.oidc.session?.accountId) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
      return (await recentSignInOf(ctx.req)) ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT;
    }),
  );
  return {
    adapter: PrismaAdapter,
    clients: [],
    jwks,
    cookies: {
      keys: cookieKeys(getConfig().secrets),
      long: LONG_COOKIE,
      short: { httpOnly: true, sameSite: "lax" },
    },
    routes: ENGINE_ROUTES,
    scopes: [...PROVIDER_SCOPES],
    // How the user signed in (amr, acr, auth_time) goes with every ID token, not only when asked for.
    claims: { openid: ["sub", "acr", "amr", "auth_time", "sid"], email: ["email", "email_verified"], profile: ["name"] },
    acrValues: ["aal1", "aal2"],
    // The ID token carries the claims of the scopes granted (email, name), as userinfo does.
    conformIdTokenClaims: false,
    responseTypes: ["code"],
    extraParams: [OFFLINE_CONSENT_PARAM],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      id_token_signed_response_alg: "RS256",
    },
    enabledJWA: { idTokenSigningAlgValues: ["RS256", "ES256"] },
    // Pairwise subjects (ADR 163): the client's metadata says which it has (adapter.server.ts).
    subjectTypes: settings.subject === "pairwise" ? ["public", "pairwise"] : ["public"],
    pairwiseIdentifier: async (_ctx: unknown, accountId: string, client: EngineClient) => pairwiseSubject(client.sectorIdentifier!, accountId),
    // The engine GETs a sector_identifier_uri to check it: only an operator's (oauth:client:add)
    // is fetched; anyone's, at dynamic registration, would make it fetch any address (ADR 163).
    sectorIdentifierUriValidate: () => {
      const { default: Engine, errors } = engineLibrary();
      if (Engine.ctx?.oidc?.route === "registration") throw new errors.InvalidClientMetadata!("sector_identifier_uri may only be set by an operator (oauth:client:add)");
      return true;
    },
    allowOmittingSingleRegisteredRedirectUri: false,
    clientBasedCORS: () => true,
    // A user's access token names the grant it came from (`gid`): requireBearer refuses it once
    // that very grant is revoked, even if the user allows the same app again before it expires.
    extraTokenClaims: (_ctx: unknown, token: unknown) => {
      const grantId = (token as { grantId?: unknown }).grantId;
      return typeof grantId === "string" && grantId ? { [GRANT_ID_CLAIM]: grantId } : undefined;
    },
    features: {
      devInteractions: { enabled: false },
      // Only the client a token was issued to learns anything of it (ADR 176): the engine's
      // default lets any confidential client — an operator's, or anyone's once it can
      // authenticate — introspect every other app's tokens.
      introspection: { enabled: true, allowedPolicy: async (_ctx: KoaContextWithOIDC, client: { clientId: string }, token: { clientId?: string }) => token.clientId === client.clientId },
      // DPoP binds tokens to a key only if the resource checks the proof: requireBearer does not,
      // so the engine must not issue tokens that claim a binding (cnf.jkt) nobody enforces (ADR 176).
      dPoP: { enabled: false },
      // Pushed authorization requests have no route here (every engine path is under /oauth/ by
      // ENGINE_ROUTES, PAR's is not): off, and so not advertised (ADR 176).
      pushedAuthorizationRequests: { enabled: false },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      clientCredentials: { enabled: true },
      // RFC 8628 at /device: 8 letters without vowels shown as XXXX-XXXX, Vestibule's pages.
      deviceFlow: {
        enabled: true,
        charset: "base-20",
        mask: "****-****",
        userCodeInputSource: userCodeInputPage,
        userCodeConfirmSource: userCodeConfirmPage,
        successSource: deviceSuccessPage,
      },
      backchannelLogout: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: KoaContextWithOIDC, form: string) => {
          if (!(await signOutWithoutAsking(ctx))) await askSignOut(ctx, form);
        },
        postLogoutSuccessSource: logoutDonePage,
      },
      registration: { enabled: settings.registration === "open", initialAccessToken: false, issueRegistrationAccessToken: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: KoaContextWithOIDC, _client: unknown, oneOf?: string[]) => oneOf ?? undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: resourceServerInfo(settings),
      },
    },
    interactions: { url: (_ctx, interaction) => `${CONSENT_PATH}/${interaction.uid}`, policy },
    findAccount,
    loadExistingGrant,
    // Refresh tokens for offline_access, rotated on every use (reuse detection: adapter.server.ts).
    issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed("refresh_token") && code.scopes.has("offline_access"),
    rotateRefreshToken: () => true,
    ttl: {
      AccessToken: settings.accessTokenTtl,
      ClientCredentials: settings.accessTokenTtl,
      AuthorizationCode: AUTHORIZATION_CODE_TTL,
      IdToken: ID_TOKEN_TTL,
      DeviceCode: DEVICE_CODE_TTL,
      Interaction: INTERACTION_TTL,
      Grant: GRANT_TTL,
      Session: GRANT_TTL,
      LogoutToken: LOGOUT_TOKEN_TTL,
      // Idle bound: each rotation lives REFRESH_TOKEN_IDLE_TTL, never past the absolute bound from the first issue.
      RefreshToken: (_ctx: KoaContextWithOIDC, token: { iiat?: number; iat?: number }) => {
        const now = Math.floor(Date.now() / 1000);
        const first = token.iiat ?? token.iat ?? now;
        return Math.max(1, Math.min(REFRESH_TOKEN_IDLE_TTL, first + REFRESH_TOKEN_ABSOLUTE_TTL - now));
      },
    },
    renderError: errorPage,
  } as Configuration;
}

/** A refresh answer kept for the grace, sealed: it carries an access and a refresh token. */
const answerPlace = (id: string) => ({ purpose: "oauth-refresh-answer", row: id });

async function keptRefreshAnswer(ctx: KoaContextWithOIDC, settings: ProviderConfig): Promise<PayloadRow | null> {
  const rotated = ctx.oidc.entities.RotatedRefreshToken as { jti: string; grantId?: string; clientId?: string } | undefined;
  if (!rotated || settings.refreshGrace === 0 || ctx.status !== 200) return null;
  // Kept under the refresh token's hash, as the token's own row is (ADR 177).
  return {
    kind: REFRESH_ANSWER_KIND,
    id: tokenRowId(rotated.jti),
    columns: {
      payload: await sealAtRest(JSON.stringify(ctx.body), answerPlace(rotated.jti), getConfig().secrets),
      grantId: rotated.grantId ?? null,
      uid: null,
      userCode: null,
      accountId: null,
      clientId: rotated.clientId ?? null,
      expiresAt: new Date(Date.now() + settings.refreshGrace * 1000),
    },
  };
}

/** The code, device code or refresh token this token answer redeemed (consumed), if any. */
function redeemed(ctx: KoaContextWithOIDC): [kind: string, token: string] | null {
  const entities = ctx.oidc.entities as Record<string, { jti?: string } | undefined>;
  for (const [entity, kind] of [["RotatedRefreshToken", "RefreshToken"], ["AuthorizationCode", "AuthorizationCode"], ["DeviceCode", "DeviceCode"]] as const) {
    const token = entities[entity]?.jti;
    if (token) return [kind, token];
  }
  return null;
}

/**
 * An answer whose tokens could not be written gives back what it redeemed: the client's retry
 * works, rather than waiting out the grace and, after it, revoking the grant as a replay. When the
 * database is down this fails too, and the token stays consumed, as before.
 */
async function releaseRedeemed(ctx: KoaContextWithOIDC): Promise<void> {
  const what = redeemed(ctx);
  if (!what) return;
  try {
    await releaseConsumed(what[0], tokenRowId(what[1]));
  } catch (error) {
    log("warn", "oauth-token-release-failed", { kind: what[0], error });
  }
}

/**
 * The token answer's rows, the kept refresh answer with them, in one statement (ADR 180); when
 * that fails, the answer is the engine's server_error instead of tokens nobody stored.
 */
async function writeTokenAnswer(ctx: KoaContextWithOIDC, settings: ProviderConfig): Promise<void> {
  try {
    await writeStagedTokens(ctx, await keptRefreshAnswer(ctx, settings));
  } catch (error) {
    log("error", "oauth-token-write-failed", { error });
    await releaseRedeemed(ctx);
    ctx.status = 500;
    ctx.body = { error: "server_error", error_description: "oops! something went wrong" };
    ctx.set("Cache-Control", "no-store");
  }
}

/** The answer the first use of refresh token `id` got, waited for while that request is still being answered. */
async function storedRefreshAnswer(id: string): Promise<unknown> {
  const until = Date.now() + REFRESH_ANSWER_WAIT_MS;
  for (;;) {
    const row = await db().oAuthPayload.findUnique({ where: { kind_id: { kind: REFRESH_ANSWER_KIND, id: tokenRowId(id) } } });
    if (row && row.expiresAt && row.expiresAt > new Date()) {
      const text = await openAtRest(row.payload, answerPlace(id), getConfig().secrets);
      return text ? JSON.parse(text) : null;
    }
    if (Date.now() >= until) return null;
    await new Promise((resolve) => setTimeout(resolve, REFRESH_ANSWER_POLL_MS));
  }
}

/** A device's poll the engine found pending, answered `slow_down` when it came too soon (device-poll.server.ts). */
async function answeredSlowDown(ctx: KoaContextWithOIDC): Promise<boolean> {
  const body = ctx.body as { error?: unknown } | undefined;
  const deviceCode = ctx.oidc.params?.device_code;
  if (ctx.status !== 400 || body?.error !== "authorization_pending" || typeof deviceCode !== "string") return false;
  if (!(await pollTooSoon(deviceCode, ctx.oidc.client?.clientId ?? null))) return false;
  const slowDown = new (engineLibrary().errors.SlowDown!)() as Error & { error_description?: string };
  ctx.body = { error: "slow_down", error_description: slowDown.error_description };
  return true;
}

function build(settings: ProviderConfig, config: Configuration): Provider {
  const provider = new (engineLibrary().default)(settings.issuer, config);
  const clientMethods = provider.Client.prototype as unknown as { includeSid: () => boolean; backchannelLogout: () => Promise<void> };
  // Every ID token names its session (`sid`), not only a back-channel client's: the logout's
  // id_token_hint is matched by it (ADR 162).
  clientMethods.includeSid = () => true;
  // The engine would POST logout tokens itself, once, inline, at its own logout only: Vestibule
  // sends them from its durable queue when any session ends (backchannel.server.ts, ADR 145).
  clientMethods.backchannelLogout = async () => {};
  // The server sets the forwarded headers from AUTH_URL itself (handleEngineRequest): the engine
  // builds every URL from the issuer, never from what a client sent.
  provider.proxy = true;
  // Tokens issued and refused, by grant, for /metrics.
  provider.on("grant.success", (ctx) => countOAuthToken(ctx.oidc.params.grant_type, "issued"));
  provider.on("grant.error", (ctx) => countOAuthToken(ctx.oidc?.params?.grant_type, "refused"));
  provider.use(async (ctx, next) => {
    await next();
    // The authorization resumed after Vestibule's sign-in or consent page (/oauth/authorize/<uid>)
    // goes back to the app by a page, not a redirect: see continueToClientPage (ADR 136).
    if (ctx.method !== "GET" || !ctx.path.startsWith(`${ENGINE_ROUTES.authorization}/`) || (ctx.status !== 302 && ctx.status !== 303)) return;
    // Koa's response (oidc-provider's context type leaves it out).
    const response = (ctx as unknown as { response: { get(name: string): string; remove(name: string): void } }).response;
    const target = URL.parse(response.get("Location"), settings.issuer);
    if (!target || target.origin === new URL(settings.issuer).origin) return;
    ctx.status = 200;
    response.remove("Location");
    continueToClientPage(ctx, target.href, target.host || target.protocol.replace(/:$/, ""));
  });
  provider.use(async (ctx, next) => {
    // A logout's id_token_hint that is not a valid ID token of ours is left out: the visitor is asked (ADR 162).
    if (ctx.path === ENGINE_ROUTES.end_session && ctx.method === "GET" && typeof ctx.query.id_token_hint === "string" && !(await hintIsValid(provider, ctx.query.id_token_hint))) {
      const { id_token_hint: _invalid, ...rest } = ctx.query;
      ctx.query = rest;
    }
    // A device is connected to a signed-in account: a signed-out visitor signs in first and comes
    // back here (its code kept), rather than allowing a device and only then being asked who they are.
    if (ctx.path === ENGINE_ROUTES.code_verification && ctx.method === "GET" && !(await vestibuleSessionOf(ctx.req))) {
      const signIn = new URLSearchParams({ callbackUrl: ctx.url });
      ctx.set("Cache-Control", "no-store");
      ctx.redirect(`${getConfig().basePath}/signin?${signIn}`);
      return;
    }
    // Anyone may register (when open) or type codes at /device: both are counted per client address.
    if (ctx.method === "POST" && (ctx.path === ENGINE_ROUTES.registration || ctx.path === ENGINE_ROUTES.code_verification)) {
      const name = ctx.path === ENGINE_ROUTES.registration ? "OAUTH_REGISTRATION_CLIENT" : "DEVICE_CODE_CLIENT";
      const peer = ctx.req.headers["x-vestibule-remote-addr"];
      const refused = await countHit(getConfig().rateLimits, name, clientSubject(typeof peer === "string" && peer ? peer : null));
      if (refused) {
        ctx.status = 429;
        ctx.set("Retry-After", String(refused.retryAfterSeconds));
        ctx.set("Cache-Control", "no-store");
        if (name === "DEVICE_CODE_CLIENT") deviceTooManyPage(ctx, retryAfterMinutes(refused.retryAfterSeconds));
        else ctx.body = { error: "temporarily_unavailable", error_description: "too many registrations from this address" };
        return;
      }
    }
    // offline_access on consent alone: the engine keeps it only under prompt=consent, so the
    // server asks for that itself, and marks it so the consent page may answer from a remembered consent.
    // OAuth 2.1 (section 3.2.2.1): a request naming no scope is processed with a default one —
    // `openid`, who the user is and nothing more — rather than refused at the end with the
    // engine's access_denied ("no scope was granted", ADR 181). Only an absent or empty one: a
    // scope given twice is left for the engine to refuse (invalid_request).
    const askedScope = ctx.query.scope;
    if (ctx.path === ENGINE_ROUTES.authorization && ctx.method === "GET" && (askedScope === undefined || (typeof askedScope === "string" && !askedScope.trim()))) {
      ctx.query = { ...ctx.query, scope: DEFAULT_SCOPE };
    }
    if (ctx.path === ENGINE_ROUTES.authorization && ctx.method === "GET") {
      const scope = typeof ctx.query.scope === "string" ? ctx.query.scope.split(" ") : [];
      const prompt = typeof ctx.query.prompt === "string" ? ctx.query.prompt.split(" ").filter(Boolean) : [];
      if (scope.includes("offline_access") && !prompt.includes("consent") && !prompt.includes("none")) {
        ctx.query = { ...ctx.query, prompt: [...prompt, "consent"].join(" "), [OFFLINE_CONSENT_PARAM]: "1" };
      }
    }
    if (ctx.method === "POST" && ctx.path === ENGINE_ROUTES.token) stageTokenWrites(ctx);
    await next();
    const route = ctx.oidc?.route;
    if ((route === "authorization" || route === "resume" || route === "code_verification" || route === "device_resume") && ctx.status < 400) {
      await recordAppOfSession(ctx);
    }
    // RP-initiated logout without a sign-in at the engine (the visitor signed in to Vestibule, not
    // through an app): the engine answers with its own page that submits itself — in English,
    // unstyled, "Continue" without JavaScript, and with it the visitor is signed out unasked. The
    // visitor is asked on Vestibule's page instead, the same form as when there is a sign-in to end.
    if (ctx.oidc?.route === "end_session" && ctx.status === 200 && typeof ctx.body === "string" && ctx.body.includes("<title>Submitting Callback</title>")) {
      await askSignOut(ctx, ctx.body);
      return;
    }
    // RP-initiated logout the user confirmed: they are signed out of Vestibule too, not only of the engine.
    if (ctx.oidc?.route === "end_session_confirm" && ctx.oidc.params.logout && ctx.status < 400) {
      const ended = await endSession(authRequest(new Request(`${settings.issuer}${ENGINE_ROUTES.end_session}`, { headers: vestibuleHeaders(ctx.req) })));
      for (const cookie of ended.setCookies) ctx.append("Set-Cookie", cookie);
      return;
    }
    // RFC 8628: the polling interval, said rather than left to the client's default.
    if (ctx.oidc?.route === "device_authorization" && ctx.status === 200 && ctx.body && typeof ctx.body === "object") {
      ctx.body = { ...(ctx.body as Record<string, unknown>), interval: DEVICE_POLL_INTERVAL };
      return;
    }
    if (ctx.oidc?.route !== "token") return;
    if (await answeredSlowDown(ctx)) return;
    const replayOf = ctx.state[REPLAY_STATE];
    if (typeof replayOf === "string") {
      const answer = await storedRefreshAnswer(replayOf);
      if (answer) {
        ctx.status = 200;
        ctx.body = answer;
        ctx.set("Cache-Control", "no-store");
      }
      return;
    }
    await writeTokenAnswer(ctx, settings);
    // A refresh's ID token is never its session's first for the app: the grant that made the
    // refresh token issued one in the same session (its scope held openid; a refresh's never widens).
    if (ctx.status === 200 && ctx.oidc.params?.grant_type !== "refresh_token" && (ctx.body as { id_token?: unknown } | undefined)?.id_token) await markIdTokenIssued(ctx);
  });
  return provider;
}

type Engine = { provider: Provider; config: Configuration; listener: (req: IncomingMessage, res: ServerResponse) => void; fingerprint: string };
let current: Engine | null = null;
let pending: Promise<Engine> | null = null;

/**
 * The engine for the current signing keys: made on first use and again whenever the keys changed
 * (a rotation's key starts signing, a retired one is dropped).
 */
export async function getEngine(): Promise<Engine> {
  const settings = getConfig().provider;
  if (!settings) throw new Error("the OAuth provider is off (AUTH_PROVIDER)");
  const jwks = await privateJwksForEngine();
  const fingerprint = JSON.stringify([settings, jwks.keys.map((k) => [k.kid, k.key_ops ?? null])]);
  if (current?.fingerprint === fingerprint) return current;
  if (pending) return pending;
  pending = (async () => {
    const config = configuration(settings, jwks);
    const provider = build(settings, config);
    current = { provider, config, listener: provider.callback(), fingerprint };
    return current;
  })().finally(() => {
    pending = null;
  });
  return pending;
}

/** Forgets the engine (tests that change the settings). */
export function forgetEngine(): void {
  current = null;
}

/**
 * Answers a request for the engine (isEnginePath): the Host and forwarded headers are set from
 * AUTH_URL, the client's address from the socket (and trusted proxies) as everywhere else, and
 * the authorization server metadata URL is answered with the OpenID configuration (one document).
 */
export async function handleEngineRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const { listener } = await getEngine();
    const issuer = new URL(issuerUrl());
    const forwarded = req.headers["x-forwarded-for"];
    const peer = req.headers["x-vestibule-remote-addr"];
    const address = selectClientAddress(typeof peer === "string" ? peer : null, typeof forwarded === "string" ? forwarded : null, getConfig().trustedProxies);
    req.headers.host = issuer.host;
    req.headers["x-forwarded-host"] = issuer.host;
    req.headers["x-forwarded-proto"] = issuer.protocol.slice(0, -1);
    if (address) {
      req.headers["x-forwarded-for"] = address;
      req.headers["x-vestibule-remote-addr"] = address;
    } else delete req.headers["x-forwarded-for"];
    const url = req.url ?? "/";
    if (url === AUTHORIZATION_SERVER_METADATA_PATH || url.startsWith(`${AUTHORIZATION_SERVER_METADATA_PATH}?`)) {
      req.url = OPENID_CONFIGURATION_PATH + url.slice(AUTHORIZATION_SERVER_METADATA_PATH.length);
    }
    listener(req, res);
  } catch (error) {
    log("error", "oauth-engine-failed", { error });
    if (!res.headersSent) {
      res.writeHead(503, { "Content-Type": "application/json", "Cache-Control": "no-store", "Retry-After": "5" });
      res.end(JSON.stringify({ error: "temporarily_unavailable" }));
    }
  }
}

/**
 * The start refuses an engine with the library's development shortcuts (ADR 133): the
 * development interactions (any user name and password signs in) and the in-memory storage.
 * Called by the server before it listens.
 */
export async function assertEngineSafe(): Promise<void> {
  if (!getConfig().provider) return;
  const { config } = await getEngine();
  const problems = engineSafetyProblems(config);
  if (problems.length) throw Object.assign(new Error(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`), { name: "ConfigError" });
}

/**
 * What is unsafe about an engine's configuration: the development interactions on (any user name
 * and password signs in), or storage other than the database (oidc-provider's in-memory adapter,
 * which forgets everything at a restart and is not shared by instances), or PKCE not required.
 */
export function engineSafetyProblems(config: Configuration): string[] {
  const problems: string[] = [];
  const features = (config.features ?? {}) as Record<string, { enabled?: boolean } | undefined>;
  if (features.devInteractions?.enabled !== false) problems.push("the OAuth provider's development interactions (oidc-provider's devInteractions) are on");
  if (config.adapter !== PrismaAdapter) problems.push("the OAuth provider's storage is not the database (oidc-provider's in-memory adapter)");
  const pkce = config.pkce as { required?: () => boolean } | undefined;
  if (pkce?.required?.() !== true) problems.push("the OAuth provider does not require PKCE of every client");
  return problems;
}
