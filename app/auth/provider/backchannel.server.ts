// Back-channel logout 1.0 (docs/features/provider.md, ADR 145): an app that got an ID token in a
// Vestibule session is told, by a signed logout token POSTed to its backchannel_logout_uri, when
// that session ends — whichever way it ends (core/session-apps.server.ts queues one row per app in
// the transaction that ends it).
//
// Three parts here: the record of which app got an ID token in which session (recordSessionApp
// when the engine issues a code or confirms a device code, markIdTokenIssued when the token
// endpoint answers with an ID token); the logout token itself, made and signed at each try with
// the key signing then; and the sender, the mail queue's pattern (ADR 059): every instance runs
// one, a due row is claimed by one conditional UPDATE so two instances never send it twice,
// failures (an error, a timeout of BACKCHANNEL_TIMEOUT_MS, an answer other than 200 or 204) wait
// with backoff, and after BACKCHANNEL_MAX_ATTEMPTS tries the row is given up, logged and counted.
//
// Only clients an operator added (the command line or /admin) are told: their URIs were written
// by an admin, so the POST goes where it says, through the outbound proxy settings (ADR 123), with
// no private-address ban. A dynamically registered client cannot name a back-channel URI.
import { randomUUID } from "node:crypto";
import { importJWK, SignJWT } from "jose";
import type { KoaContextWithOIDC } from "oidc-provider";
import { getConfig } from "../core/config.server";
import { log } from "../core/log.server";
import { countBackchannelLogout } from "../core/metrics.server";
import { outboundFetch } from "../core/outbound-fetch.server";
import { onAppLogoutsQueued } from "../core/session-apps.server";
import { db } from "../../db/client.server";
import { LOGOUT_TOKEN_TTL } from "./lifetimes.server";
import { currentKeyStates, issuerUrl, type SigningAlgorithm } from "./signing-keys.server";

/** The event a logout token carries (Back-Channel Logout 1.0, section 2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";
/** How long one delivery may take, connection to answer. */
export const BACKCHANNEL_TIMEOUT_MS = 5_000;
/** How often each instance looks for due logouts (a queued one also wakes this instance's sender). */
export const BACKCHANNEL_POLL_MS = 5_000;
/** How long a claim holds a row: longer than one delivery may take. */
export const BACKCHANNEL_CLAIM_MS = 60_000;
/** Tries before a logout is given up: the retries wait 10 s, 40 s, 160 s, … at most an hour (about 4 hours in all). */
export const BACKCHANNEL_MAX_ATTEMPTS = 8;
const FIRST_RETRY_MS = 10_000;
const MAX_RETRY_MS = 60 * 60_000;
const CLAIM_BATCH = 20;
const MAX_ERROR = 300;
/** How long the record of an app in a session is kept at most (a session lives less). */
const SESSION_APP_TTL_MS = 400 * 24 * 60 * 60_000;

/** The wait before try number `attempts + 1`, after `attempts` failed tries. */
export function backchannelRetryDelayMs(attempts: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 4 ** Math.max(0, attempts - 1));
}

// ---- Which app got an ID token in which session ------------------------------------------------

type EngineCode = { sid?: string; sessionUid?: string; accountId?: string; scope?: string };
type EngineClient = { clientId: string; backchannelLogoutUri?: string };

/** Whether an operator added the client (only those are told: their URIs were written by an admin). */
async function operatorClientWithBackchannel(client: EngineClient): Promise<boolean> {
  if (!client.backchannelLogoutUri) return false;
  const row = await db().oAuthClient.findUnique({ where: { clientId: client.clientId }, select: { source: true } });
  return row !== null && row.source !== "registration";
}

/**
 * A code (or a confirmed device code) was issued for an openid request: the app, the engine's sid
 * for it and the Vestibule session it was issued in are recorded, for that session's end.
 * `sessionId` and `sub` come from the caller (engine.server.ts): the browser's Vestibule session
 * and the subject the client sees.
 */
export async function recordSessionApp(input: { code: EngineCode; client: EngineClient; sessionId: string; userId: string; sub: string }): Promise<void> {
  const { code, client, sessionId, userId, sub } = input;
  if (!code.sid || !code.sessionUid || code.accountId !== userId) return;
  if (!(code.scope ?? "").split(" ").includes("openid")) return;
  if (!(await operatorClientWithBackchannel(client))) return;
  const data = { userId, sub, sid: code.sid, engineSessionUid: code.sessionUid, expiresAt: new Date(Date.now() + SESSION_APP_TTL_MS) };
  await db().oAuthSessionApp.upsert({
    where: { sessionId_clientId: { sessionId, clientId: client.clientId } },
    create: { sessionId, clientId: client.clientId, ...data },
    update: data,
  });
}

/** The token endpoint answered with an ID token from `source` (a code, device code or refresh token): the app got one in that session. */
export async function markIdTokenIssued(ctx: KoaContextWithOIDC): Promise<void> {
  const entities = ctx.oidc.entities as Record<string, EngineCode | undefined>;
  const source = entities.AuthorizationCode ?? entities.DeviceCode ?? entities.RefreshToken;
  const clientId = ctx.oidc.client?.clientId;
  if (!source?.sid || !source.sessionUid || !clientId) return;
  await db().oAuthSessionApp.updateMany({
    where: { engineSessionUid: source.sessionUid, clientId, sid: source.sid, idTokenAt: null },
    data: { idTokenAt: new Date() },
  });
}

// ---- The logout token ---------------------------------------------------------------------------

type Delivery = { clientId: string; sub: string; sid: string | null };

/**
 * The logout token for one app (Back-Channel Logout 1.0, section 2.4): iss, aud, iat, exp, jti,
 * sub and sid, the back-channel logout event, typ logout+jwt, no nonce; signed with the key
 * signing now for the client's ID token algorithm.
 */
export async function logoutToken(delivery: Delivery, alg: SigningAlgorithm, now = new Date()): Promise<string> {
  const key = (await currentKeyStates(now)).find((k) => k.alg === alg && k.signs);
  if (!key) throw new Error(`no ${alg} signing key`);
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ events: { [BACKCHANNEL_LOGOUT_EVENT]: {} }, ...(delivery.sid ? { sid: delivery.sid } : {}) })
    .setProtectedHeader({ alg, kid: key.kid, typ: "logout+jwt" })
    .setIssuer(issuerUrl())
    .setAudience(delivery.clientId)
    .setSubject(delivery.sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + LOGOUT_TOKEN_TTL)
    .setJti(randomUUID())
    .sign(await importJWK(key.jwk, alg));
}

/** Where and how one app is told, or null when it cannot be any more (removed, no URI). */
async function destinationOf(clientId: string): Promise<{ uri: string; alg: SigningAlgorithm } | null> {
  const row = await db().oAuthClient.findUnique({ where: { clientId }, select: { metadata: true, source: true } });
  if (!row || row.source === "registration") return null;
  const metadata = JSON.parse(row.metadata) as { backchannel_logout_uri?: unknown; id_token_signed_response_alg?: unknown };
  if (typeof metadata.backchannel_logout_uri !== "string") return null;
  return { uri: metadata.backchannel_logout_uri, alg: metadata.id_token_signed_response_alg === "ES256" ? "ES256" : "RS256" };
}

/** One POST of a logout token; throws on anything but 200 or 204 within the timeout. */
async function deliver(delivery: Delivery): Promise<"sent" | "no-destination"> {
  const destination = await destinationOf(delivery.clientId);
  if (!destination) return "no-destination";
  const token = await logoutToken(delivery, destination.alg);
  const res = await outboundFetch(destination.uri, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", "Cache-Control": "no-store" },
    body: new URLSearchParams({ logout_token: token }).toString(),
    signal: AbortSignal.timeout(BACKCHANNEL_TIMEOUT_MS),
  });
  await res.body?.cancel();
  if (res.status !== 200 && res.status !== 204) throw new Error(`the back-channel logout URI answered ${res.status}`);
  return "sent";
}

// ---- The sender -------------------------------------------------------------------------------

type Claimed = Delivery & { id: string; attempts: number; claimedUntil: Date };

/** Claims up to `limit` due rows: each by one conditional UPDATE that only one claimer can win. */
export async function claimDueLogouts(now = new Date(), { limit = CLAIM_BATCH, claimMs = BACKCHANNEL_CLAIM_MS } = {}): Promise<Claimed[]> {
  const client = db();
  const free = { sentAt: null, givenUpAt: null, nextAttemptAt: { lte: now }, OR: [{ claimedUntil: null }, { claimedUntil: { lte: now } }] };
  const due = await client.backchannelLogout.findMany({ where: free, orderBy: { nextAttemptAt: "asc" }, take: limit, select: { id: true } });
  const claimed: Claimed[] = [];
  for (const { id } of due) {
    // A claim time no other claimer writes: the mark-as-sent below names it.
    const claimedUntil = new Date(now.getTime() + claimMs + Math.floor(Math.random() * 1000));
    const { count } = await client.backchannelLogout.updateMany({ where: { id, ...free }, data: { claimedUntil } });
    if (count !== 1) continue;
    const row = await client.backchannelLogout.findUnique({ where: { id }, select: { id: true, clientId: true, sub: true, sid: true, attempts: true } });
    if (row) claimed.push({ ...row, claimedUntil });
  }
  return claimed;
}

/**
 * One round: claims the due rows and delivers each; a delivered row is marked sent, a failed one
 * waits for its next try or is given up. Never throws.
 */
export async function sendDueLogouts(now = new Date()): Promise<{ sent: number; failed: number }> {
  const result = { sent: 0, failed: 0 };
  if (!getConfig().provider) return result;
  let rows: Claimed[];
  try {
    rows = await claimDueLogouts(now);
  } catch (error) {
    log("warn", "backchannel-queue-unavailable", { error });
    return result;
  }
  const client = db();
  await Promise.all(
    rows.map(async (row) => {
      const mine = { id: row.id, claimedUntil: row.claimedUntil, sentAt: null };
      try {
        const outcome = await deliver(row);
        await client.backchannelLogout.updateMany({ where: mine, data: { sentAt: new Date(), claimedUntil: null, attempts: row.attempts + 1, lastError: null } });
        if (outcome === "sent") {
          result.sent++;
          countBackchannelLogout("sent");
          log("info", "backchannel-logout-sent", { clientId: row.clientId, attempts: row.attempts + 1 });
        }
      } catch (error) {
        result.failed++;
        const attempts = row.attempts + 1;
        const givenUp = attempts >= BACKCHANNEL_MAX_ATTEMPTS;
        const lastError = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR);
        const data = givenUp
          ? { attempts, claimedUntil: null, lastError, givenUpAt: new Date() }
          : { attempts, claimedUntil: null, lastError, nextAttemptAt: new Date(Math.max(Date.now(), now.getTime()) + backchannelRetryDelayMs(attempts)) };
        await client.backchannelLogout.updateMany({ where: mine, data }).catch((e: unknown) => log("warn", "backchannel-queue-unavailable", { error: e }));
        countBackchannelLogout(givenUp ? "given_up" : "retry");
        log(givenUp ? "error" : "warn", givenUp ? "backchannel-logout-given-up" : "backchannel-logout-retry", { clientId: row.clientId, attempts, error: lastError });
      }
    }),
  );
  return result;
}

type SenderState = { timer: ReturnType<typeof setInterval> | null; running: Promise<unknown> | null; again: boolean };
const STATE = Symbol.for("vestibule.backchannel-sender");
const holder = globalThis as typeof globalThis & { [STATE]?: SenderState };
const sender = () => (holder[STATE] ??= { timer: null, running: null, again: false });

/** Runs one round now, or once more after the round in progress; never waited for. */
export function wakeBackchannelSender(): void {
  const s = sender();
  if (s.running) {
    s.again = true;
    return;
  }
  s.running = sendDueLogouts()
    .catch(() => undefined)
    .finally(() => {
      s.running = null;
      if (s.again) {
        s.again = false;
        wakeBackchannelSender();
      }
    });
}

/**
 * The instance's sender (while the provider is on): a round every BACKCHANNEL_POLL_MS, unref'd,
 * and one as soon as a session's end queued logouts in this process. Returns a function that stops it.
 */
export function startBackchannelSender({ everyMs = BACKCHANNEL_POLL_MS } = {}): () => void {
  const s = sender();
  if (getConfig().provider && !s.timer) {
    s.timer = setInterval(wakeBackchannelSender, everyMs);
    s.timer.unref();
    onAppLogoutsQueued(wakeBackchannelSender);
  }
  return stopBackchannelSender;
}

export function stopBackchannelSender(): void {
  const s = sender();
  if (s.timer) clearInterval(s.timer);
  s.timer = null;
  onAppLogoutsQueued(null);
}

/** For tests and shutdown: resolves once the round in progress (if any) is done. */
export async function backchannelSenderIdle(): Promise<void> {
  while (sender().running) await sender().running;
}
