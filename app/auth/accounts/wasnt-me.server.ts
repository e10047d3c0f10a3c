// "This wasn't me" (ADR 081): the single-use link in every security e-mail.
//
//   GET  /auth/wasnt-me?email&token   a page that says what the button will do, and the button (a POST
//                                 with the CSRF token); a GET changes nothing, because mail
//                                 scanners and link previewers open every link in a message.
//   POST /auth/wasnt-me               token + email + csrfToken: ends every session of the account on
//                                 every instance, removes its password (a reset is the way back),
//                                 makes every device cookie issued so far a new device again,
//                                 records `security-report`, and says so. Never signs anyone in.
//
// The token is a VerificationToken row like every e-mailed link (hashed with the secret: a copy
// of the table cannot be turned into links, and no link can be forged without AUTH_SECRET), whose
// purpose `wasnt-me:<event>` binds it to the change it reports and whose userId binds it to the
// account. Using it up is one conditional DELETE whose row count decides, inside the transaction
// that removes the password: of two POSTs at once exactly one acts (PostgreSQL makes the second
// DELETE wait for the first to commit and then match nothing; SQLite runs writes one at a time).
import { db } from "../../db/client.server";
import { BadRequestError, readBody, refusedBodyResponse, type Body } from "../core/body.server";
import { verifyCsrf, ensureCsrfToken } from "../core/csrf.server";
import { isWellFormedLinkToken, linkTokenHash, linkTokenHashes, newLinkToken } from "../core/crypto.server";
import { clientSubject, countHit, retryAfterMinutes } from "../core/limits.server";
import { LIMIT_KIND } from "../core/limit-table";
import { log } from "../core/log.server";
import { isDatabaseUnavailable, noteDatabaseUnavailable, outageRedirect } from "../core/outage.server";
import { authRequest, clientAddress, type AuthRequest } from "../core/request.server";
import { errorRedirect, redirectResponse, wantsJsonRedirect } from "../core/respond.server";
import { revokeUserSessions } from "../core/session.server";
import { t } from "../../i18n/t.server";
import { eventSource, recordEvent } from "./audit.server";

/** Seven days: long enough for an owner back from a week away. */
export const WASNT_ME_MAX_AGE = 7 * 24 * 60 * 60;
const PURPOSE_PREFIX = "wasnt-me:";
const MAX_ADDRESS_LENGTH = 320;

/** The VerificationToken rows that are "This wasn't me" links, as a where clause. */
export function wasntMeLinks() {
  return { purpose: { startsWith: PURPOSE_PREFIX } };
}

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

/**
 * Stores a fresh token for the notice of `event` to `address` about the account `userId` and
 * returns the link. Inside `tx` when the notice is queued with its change.
 */
export async function issueWasntMeLink(
  ar: AuthRequest,
  input: { userId: string; address: string; event: string; tx?: Tx; now?: Date },
): Promise<string> {
  const token = newLinkToken();
  const now = input.now ?? new Date();
  await (input.tx ?? db()).verificationToken.create({
    data: {
      identifier: input.address,
      tokenHash: linkTokenHash(token, ar.config.secrets[0]),
      expires: new Date(now.getTime() + WASNT_ME_MAX_AGE * 1000),
      purpose: `${PURPOSE_PREFIX}${input.event}`,
      userId: input.userId,
    },
  });
  return `${ar.origin}${ar.config.basePath}/wasnt-me?${new URLSearchParams({ email: input.address, token })}`;
}

type Link = { email: string; token: string };

function linkOf(email: unknown, token: unknown): Link | null {
  if (typeof email !== "string" || email.length === 0 || email.length > MAX_ADDRESS_LENGTH) return null;
  if (!isWellFormedLinkToken(token)) return null;
  return { email, token };
}

function liveRow(ar: AuthRequest, link: Link, now: Date) {
  return {
    identifier: link.email,
    tokenHash: { in: linkTokenHashes(link.token, ar.config.secrets) },
    ...wasntMeLinks(),
    expires: { gt: now },
  };
}

export type WasntMePage =
  | { state: "confirm"; csrfToken: string; email: string; token: string; accountGone: boolean; formError?: string }
  | { state: "done"; accountGone: boolean; forgotPasswordUrl: string | null; signInUrl: string }
  | { state: "invalid"; forgotPasswordUrl: string | null }
  | { state: "limited"; retryAfterSeconds: number };

export type WasntMeAnswer = { page: WasntMePage; status: number; setCookies: string[] };

function forgotPasswordUrl(ar: AuthRequest, email: string | null): string | null {
  if (!ar.config.credentials) return null;
  const url = `${ar.origin}${ar.config.basePath}/forgot-password`;
  return email ? `${url}?${new URLSearchParams({ email })}` : url;
}

function invalid(ar: AuthRequest): WasntMeAnswer {
  return { page: { state: "invalid", forgotPasswordUrl: forgotPasswordUrl(ar, null) }, status: 400, setCookies: [] };
}

/** GET: the confirmation page for a live link, else the "cannot be used" page. Changes nothing. */
export async function wasntMePage(ar: AuthRequest, now = new Date()): Promise<WasntMeAnswer> {
  return confirmPage(ar, ar.url.searchParams.get("email"), ar.url.searchParams.get("token"), now);
}

async function confirmPage(ar: AuthRequest, email: unknown, token: unknown, now: Date, formError?: string): Promise<WasntMeAnswer> {
  const link = linkOf(email, token);
  if (!link) return invalid(ar);
  const row = await db().verificationToken.findFirst({ where: liveRow(ar, link, now), select: { identifier: true, userId: true } });
  if (!row) return invalid(ar);
  // The notice of a deletion is sent once the account is gone: the page says so, and offers only
  // to record the report (nothing is left to sign out or remove).
  const accountGone = !row.userId || (await db().user.count({ where: { id: row.userId } })) === 0;
  const csrf = ensureCsrfToken(ar);
  const page: WasntMePage = { state: "confirm", csrfToken: csrf.token, email: link.email, token: link.token, accountGone, ...(formError ? { formError } : {}) };
  return { page, status: formError ? 403 : 200, setCookies: csrf.setCookie ? [csrf.setCookie] : [] };
}

/**
 * When the account's device cookies were last made worthless by a report, or null (also for an
 * address with no account: the same one query either way). Every reader of the device cookie
 * passes it to deviceIdFor: a note of the account written before it is not recognised — not for
 * the new-device notice, not for the device's own budgets, not past the consecutive-failure
 * ceiling.
 */
export async function devicesResetAt(who: string | { email: string }): Promise<Date | null> {
  const where = typeof who === "string" ? { id: who } : { email: who.email };
  return (await db().user.findUnique({ where, select: { devicesResetAt: true } }))?.devicesResetAt ?? null;
}

/** What the winning POST did, for the audit trail and the page. */
type Report = { event: string; userId: string | null; reportedUserId: string | null; undone: Undone | null };

/** What the report took away besides the password and the sessions (ADR 091). */
type Undone = { passkeysRemoved: number; accountsUnlinked: number; secondFactorRemoved: boolean };

/**
 * How long before its notice's link a reported change may have been written: the change and its
 * notice are one request (the passkey row, then the link), milliseconds apart; a minute is slack.
 */
const CHANGE_SLACK_MS = 60_000;

/**
 * The ways in added since the reported change (ADR 091): passkeys registered and provider accounts
 * linked, which sign in by themselves, and a second factor turned on, whose authenticator would
 * hold the owner's password reset hostage. A thief who has been in the account adds exactly these;
 * ends of sessions and the removed password alone would let them straight back in. What the owner
 * had before the change stays.
 */
async function undoWaysInSince(tx: Tx, userId: string, since: Date): Promise<Undone> {
  const passkeys = await tx.passkey.deleteMany({ where: { userId, createdAt: { gte: since } } });
  const accounts = await tx.account.deleteMany({ where: { userId, createdAt: { gte: since } } });
  const factor = await tx.twoFactorCredential.deleteMany({ where: { userId, OR: [{ confirmedAt: { gte: since } }, { confirmedAt: null }] } });
  // Its recovery codes go with a removed authenticator; with the owner's own left in place, so do theirs.
  if (factor.count > 0) await tx.recoveryCode.deleteMany({ where: { userId } });
  return { passkeysRemoved: passkeys.count, accountsUnlinked: accounts.count, secondFactorRemoved: factor.count > 0 };
}

/** Uses the token up and removes the password, in one transaction; null when the token is not (or no longer) live. */
async function useLink(ar: AuthRequest, link: Link, now: Date): Promise<Report | null> {
  return db().$transaction(async (tx) => {
    const row = await tx.verificationToken.findFirst({ where: liveRow(ar, link, now), select: { tokenHash: true, purpose: true, userId: true, expires: true } });
    if (!row) return null;
    const { count } = await tx.verificationToken.deleteMany({ where: { identifier: link.email, tokenHash: row.tokenHash, expires: { gt: now } } });
    if (count !== 1) return null;
    const user = row.userId ? await tx.user.findUnique({ where: { id: row.userId }, select: { id: true, email: true } }) : null;
    let undone: Undone | null = null;
    if (user) {
      await tx.password.deleteMany({ where: { userId: user.id } });
      // Every browser that signed in before the report is a new device again (devicesResetAt).
      await tx.user.update({ where: { id: user.id }, data: { devicesResetAt: now } });
      const changedAt = new Date(row.expires.getTime() - WASNT_ME_MAX_AGE * 1000 - CHANGE_SLACK_MS);
      undone = await undoWaysInSince(tx, user.id, changedAt);
      // Links already sent for this account (a sign-in, a reset, an address change) would let
      // whoever holds them back in: gone too. Other "This wasn't me" links stay usable.
      await tx.verificationToken.deleteMany({
        where: {
          OR: [{ userId: user.id }, ...(user.email ? [{ identifier: user.email }] : [])],
          NOT: wasntMeLinks(),
        },
      });
    }
    return { event: row.purpose.slice(PURPOSE_PREFIX.length), userId: user?.id ?? null, reportedUserId: row.userId, undone };
  });
}

/**
 * POST: the report. CSRF and origin first, then the client's budget, then the token: a used,
 * expired or forged one gets the same "cannot be used" page, so a phisher replaying a link learns
 * nothing. The answer carries no session cookie.
 */
export async function reportWasntMe(ar: AuthRequest, body: Record<string, unknown>, now = new Date()): Promise<WasntMeAnswer | { csrfRefused: true }> {
  if (!verifyCsrf(ar, body.csrfToken)) return { csrfRefused: true };
  const refused = await countHit(ar.config.rateLimits, "WASNT_ME_CLIENT", clientSubject(clientAddress(ar)));
  if (refused) {
    await recordEvent("rate-limited", { ...eventSource(ar), detail: { bucket: refused.limit } });
    return { page: { state: "limited", retryAfterSeconds: refused.retryAfterSeconds }, status: 429, setCookies: [] };
  }
  const link = linkOf(body.email, body.token);
  const report = link ? await useLink(ar, link, now) : null;
  if (!report) {
    log("info", "wasnt-me-refused", { wellFormed: link !== null });
    return invalid(ar);
  }
  // After the commit: every session of the account, of both strategies, on every instance (the
  // revocation list and its NOTIFY), and every jwt cookie issued up to now.
  const sessionsEnded = report.userId ? await revokeUserSessions(report.userId) : 0;
  await recordEvent("security-report", {
    userId: report.userId,
    ...eventSource(ar),
    detail: {
      event: report.event,
      count: sessionsEnded,
      passwordRemoved: report.userId !== null,
      ...(report.undone ?? {}),
      ...(report.userId ? {} : { deletedUser: report.reportedUserId }),
    },
  });
  const signInUrl = `${ar.origin}${ar.config.basePath}/signin`;
  return { page: { state: "done", accountGone: report.userId === null, forgotPasswordUrl: forgotPasswordUrl(ar, link!.email), signInUrl }, status: 200, setCookies: [] };
}

// ---- The route's entry points (app/routes/auth/wasnt-me.tsx) -------------------------------------

export type WasntMePost = { type: "answer"; answer: WasntMeAnswer } | { type: "response"; response: Response };

/** POST as the page's form sends it: the answer to render, or a redirect (a refused CSRF token). */
export async function wasntMeAction(request: Request): Promise<WasntMePost> {
  const ar = authRequest(request);
  let body: Body;
  try {
    body = await readBody(request);
  } catch (error) {
    if (error instanceof BadRequestError) return { type: "response", response: refusedBodyResponse(error) };
    throw error;
  }
  const json = wantsJsonRedirect(request, body);
  const answer = await reportWasntMe(ar, body);
  if ("csrfRefused" in answer) {
    if (json) return { type: "response", response: errorRedirect(ar, "MissingCSRF", { json }) };
    // A person whose form outlived its CSRF cookie: the same question again, with a fresh token.
    return { type: "answer", answer: await confirmPage(ar, body.email, body.token, new Date(), t("common.formExpired")) };
  }
  if (!json) return { type: "answer", answer };
  // The JSON client's answer (the Auth.js `{url}` shape): where a person would go next.
  const page = answer.page;
  if (page.state === "done") return { type: "response", response: redirectResponse(page.forgotPasswordUrl ?? page.signInUrl, { json }) };
  if (page.state === "limited") {
    const response = errorRedirect(ar, "RateLimited", { json, extra: { minutes: String(retryAfterMinutes(page.retryAfterSeconds)), limit: LIMIT_KIND.WASNT_ME_CLIENT } });
    response.headers.set("Retry-After", String(page.retryAfterSeconds));
    return { type: "response", response };
  }
  return { type: "response", response: errorRedirect(ar, "Verification", { json }) };
}

/**
 * What JSON-mode clients get (the route's middleware): always a Response, the outage's 503 `{url}`
 * included. (A page's outage is the root middleware's to answer.)
 */
export async function wasntMeJsonAction(request: Request): Promise<Response> {
  try {
    const outcome = await wasntMeAction(request);
    return outcome.type === "response" ? outcome.response : errorRedirect(authRequest(request), "Verification", { json: true });
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    noteDatabaseUnavailable(error, "wasnt-me");
    return outageRedirect(authRequest(request), { json: true });
  }
}

/** GET: the page, in the request's context. */
export function wasntMeLoader(request: Request): Promise<WasntMeAnswer> {
  return wasntMePage(authRequest(request));
}
