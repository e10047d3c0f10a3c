// The limits: which attempts count, against which budgets, and what a
// refusal says. The counters are rows of LimitCounter, kept by rate-limiter-flexible's Prisma
// store, so every instance sharing the database counts the same attempts (ADR 035).
import { RateLimiterPrisma } from "rate-limiter-flexible";
import { db } from "../../db/client.server";
import { limitClientKey } from "./client-address.server";
import { sha256hex } from "./crypto.server";
import {
  DEFAULT_LIMITS,
  LIMIT_ENV_PREFIX,
  LIMIT_NAMES,
  parseLimitOverrides,
  retryAfterMinutes,
  type Limit,
  type LimitName,
  type LimitRefusal,
  type LimitTable,
} from "./limit-table";

export { DEFAULT_LIMITS, LIMIT_ENV_PREFIX, LIMIT_NAMES, parseLimitOverrides, retryAfterMinutes };
export type { Limit, LimitName, LimitRefusal, LimitTable };

// The store reaches the client through a getter: tests and scripts replace the database client
// (closeDb/db), and the limiter must always use the current one.
const store = {
  get limitCounter() {
    return db().limitCounter;
  },
};

const limiters = new Map<string, RateLimiterPrisma>();

function limiter(name: LimitName, limit: Limit): RateLimiterPrisma {
  const id = `${name}:${limit.count}/${limit.seconds}`;
  let found = limiters.get(id);
  if (!found) {
    found = new RateLimiterPrisma({
      storeClient: store,
      tableName: "limitCounter",
      keyPrefix: name,
      points: limit.count,
      duration: limit.seconds,
      // Expired rows are deleted by npm run db:cleanup, not by a timer in every instance.
      clearExpiredByTimeout: false,
    });
    limiters.set(id, found);
  }
  return found;
}

/**
 * Subjects are stored as SHA-256 digests: the counter table holds no addresses, e-mail or IP, and
 * every key has the same length whatever the visitor typed.
 */
const subjectKey = (...parts: string[]) => sha256hex(parts.join("\n"));

const secondsLeft = (ms: number, limit: Limit) => (ms > 0 ? Math.ceil(ms / 1000) : limit.seconds);

type Counter = { name: LimitName; subject: string };

/** Refusal for the first counter already at its limit (no counting), or null. */
async function firstExhausted(limits: LimitTable, counters: Counter[]): Promise<LimitRefusal | null> {
  const states = await Promise.all(counters.map((c) => limiter(c.name, limits[c.name]).get(c.subject)));
  let refusal: LimitRefusal | null = null;
  counters.forEach((c, i) => {
    const state = states[i];
    if (!state || state.consumedPoints < limits[c.name].count) return;
    const retryAfterSeconds = secondsLeft(state.msBeforeNext, limits[c.name]);
    // Several limits refusing: the visitor has to wait for the longest of them.
    if (!refusal || retryAfterSeconds > refusal.retryAfterSeconds) refusal = { limit: c.name, retryAfterSeconds };
  });
  return refusal;
}

/**
 * Counts one attempt on each counter in turn; a refusal when one of them went past its limit. A
 * refused attempt is taken back off every counter it reached, and the later counters are never
 * touched: it was never checked, so it is no failure (only concurrent attempts get here past
 * firstExhausted). Left counted, a burst of correct sign-ins over the pair's budget would fill the
 * account's and the client's budgets with attempts that never failed; and a burst refused by the
 * first counter would, while in flight, push the later ones over their limits and refuse an attempt
 * the first counter had granted. Granted attempts still hold their points, so no more than the
 * limit get through.
 */
async function countOn(limits: LimitTable, counters: Counter[], points = 1, left?: TriesLeft): Promise<LimitRefusal | null> {
  for (let i = 0; i < counters.length; i++) {
    const c = counters[i];
    const state = await limiter(c.name, limits[c.name]).penalty(c.subject, points);
    const remaining = limits[c.name].count - state.consumedPoints;
    if (left && remaining < left.tries) Object.assign(left, { tries: Math.max(0, remaining), limit: c.name, retryAfterSeconds: secondsLeft(state.msBeforeNext, limits[c.name]) });
    if (state.consumedPoints > limits[c.name].count) {
      const refusal: LimitRefusal = { limit: c.name, retryAfterSeconds: secondsLeft(state.msBeforeNext, limits[c.name]) };
      const reached = counters.slice(0, i + 1);
      await Promise.all(reached.map((r) => limiter(r.name, limits[r.name]).reward(r.subject, points)));
      return refusal;
    }
  }
  return null;
}

/**
 * One credentials attempt. `address` is the normalised address typed (known or not: the same
 * counters and the same work either way); `deviceId` is set only when the request carries a valid
 * device cookie for that address; `client` is the client address, null when unknown.
 */
export type CredentialsAttempt = { address: string; client: string | null; deviceId: string | null };

/**
 * How many more attempts the counters of an attempt allow once it failed (its own counted), and
 * the counter nearest to its limit: the one whose wait a visitor meets when none are left.
 */
export type TriesLeft = { tries: number; limit: LimitName | null; retryAfterSeconds: number };

/**
 * A granted attempt: call `settle` with the password check's outcome. `left`: the tries the
 * counters allow after this one if it fails — the same numbers for every address typed, known or
 * not, since no counter depends on whether the account exists (ADR 160).
 */
export type CredentialsReservation = { settle(succeeded: boolean): Promise<void>; left: TriesLeft };

function credentialsCounters({ address, client, deviceId }: CredentialsAttempt): { counted: Counter[]; resetOnSuccess: number } {
  // A browser that has signed in to this account before spends only its own budget, so failures
  // made on purpose from elsewhere (or from the owner's own network) cannot lock it out.
  if (deviceId !== null) return { counted: [{ name: "CREDENTIALS_DEVICE", subject: subjectKey(deviceId, address) }], resetOnSuccess: 1 };
  const who = clientSubject(client);
  const counters: Counter[] = [
    { name: "CREDENTIALS_ACCOUNT_CLIENT", subject: subjectKey(address, who) },
    { name: "CREDENTIALS_CLIENT", subject: subjectKey(who) },
    { name: "CREDENTIALS_ACCOUNT", subject: subjectKey(address) },
  ];
  return { counted: counters, resetOnSuccess: 1 };
}

/**
 * The client as the limits count it: an IPv6 address by its /64 (limitClientKey). Without a known
 * client address (no TCP peer: only in-process callers) every such request is one client, so the
 * pair and client limits still apply.
 */
export function clientSubject(client: string | null): string {
  return client === null ? "unknown" : limitClientKey(client);
}

/**
 * Checked before the password is verified. Refused: nothing is counted. Granted: the attempt is
 * counted at once (so concurrent guesses cannot all slip under the limit while their passwords are
 * being hashed), and `settle(true)` takes it back again: a success never counts, and it resets the
 * (account, client) or device counter outright.
 */
export async function reserveCredentialsAttempt(limits: LimitTable, attempt: CredentialsAttempt): Promise<LimitRefusal | CredentialsReservation> {
  const { counted, resetOnSuccess } = credentialsCounters(attempt);
  return reserveFailure(limits, counted, resetOnSuccess);
}

/**
 * A failure-only reservation on `counted`: refused when one is spent (nothing counted), else
 * counted at once; a success resets the first `resetOnSuccess` counters and gives the others
 * their point back.
 */
async function reserveFailure(limits: LimitTable, counted: Counter[], resetOnSuccess: number): Promise<LimitRefusal | CredentialsReservation> {
  const exhausted = await firstExhausted(limits, counted);
  if (exhausted) return exhausted;
  const left: TriesLeft = { tries: Number.POSITIVE_INFINITY, limit: null, retryAfterSeconds: 0 };
  const raced = await countOn(limits, counted, 1, left);
  if (raced) return raced;
  return {
    left,
    async settle(succeeded) {
      if (!succeeded) return;
      const reset = counted.slice(0, resetOnSuccess);
      const refund = counted.slice(resetOnSuccess);
      await Promise.all(reset.map((c) => limiter(c.name, limits[c.name]).delete(c.subject)));
      await Promise.all(refund.map((c) => limiter(c.name, limits[c.name]).reward(c.subject, 1)));
    },
  };
}

/**
 * The consecutive-failure count (ADR 083), keyed by the address typed, known
 * or not (so an unknown address past the ceiling answers as a known one does). Counted on every
 * failed password attempt, from any browser; never refuses anything by itself.
 */
const consecutiveSubject = (address: string) => subjectKey("consecutive", address);

/** True once `address` has had CREDENTIALS_CONSECUTIVE failures in a row (no success between). */
export async function consecutiveFailureCeilingReached(limits: LimitTable, address: string): Promise<boolean> {
  const state = await limiter("CREDENTIALS_CONSECUTIVE", limits.CREDENTIALS_CONSECUTIVE).get(consecutiveSubject(address));
  return state !== null && state.consumedPoints >= limits.CREDENTIALS_CONSECUTIVE.count;
}

/** One more failed password attempt against `address` (`failures`: tests seed many at once). */
export async function countConsecutiveFailure(limits: LimitTable, address: string, failures = 1): Promise<void> {
  await limiter("CREDENTIALS_CONSECUTIVE", limits.CREDENTIALS_CONSECUTIVE).penalty(consecutiveSubject(address), failures);
}

/** A sign-in to the account succeeded: the count starts again. */
export async function clearConsecutiveFailures(limits: LimitTable, address: string): Promise<void> {
  await limiter("CREDENTIALS_CONSECUTIVE", limits.CREDENTIALS_CONSECUTIVE).delete(consecutiveSubject(address));
}

/**
 * A password reset proved the mailbox (ADR 159): the wrong passwords counted against the account
 * end with the old password. Cleared: the account's own count, this client's and this browser's
 * counts for it, and the consecutive-failure count. Left: the client's count over every address
 * (it is about the network, not this account) and other clients' counts for this address.
 */
export async function clearPasswordFailures(limits: LimitTable, attempt: CredentialsAttempt): Promise<void> {
  const { address, client, deviceId } = attempt;
  const counters: Counter[] = [
    { name: "CREDENTIALS_ACCOUNT_CLIENT", subject: subjectKey(address, clientSubject(client)) },
    { name: "CREDENTIALS_ACCOUNT", subject: subjectKey(address) },
    ...(deviceId !== null ? [{ name: "CREDENTIALS_DEVICE" as const, subject: subjectKey(deviceId, address) }] : []),
  ];
  await Promise.all(counters.map((c) => limiter(c.name, limits[c.name]).delete(c.subject)));
  await clearConsecutiveFailures(limits, address);
}

export function isLimitRefusal(value: LimitRefusal | CredentialsReservation): value is LimitRefusal {
  return "limit" in value;
}

/**
 * One passkey answer from `client` (ADR 063), checked before the answer is looked at: refused when
 * the client's budget of failures is spent (nothing counted); granted, it is counted at once (so
 * concurrent answers cannot all slip under the limit while they are verified) and `settle(true)`
 * takes it back: a sign-in never counts.
 */
export async function reservePasskeyAnswer(limits: LimitTable, client: string | null): Promise<LimitRefusal | CredentialsReservation> {
  return reserveFailure(limits, [{ name: "PASSKEY_CLIENT", subject: subjectKey("passkey", clientSubject(client)) }], 0);
}

/**
 * One e-mail link send: the client's budget first, then the address's. In that order a client over
 * its own budget stops charging the addresses it names, so it cannot lock other people out.
 */
export async function countEmailSend(limits: LimitTable, address: string, client: string | null): Promise<LimitRefusal | null> {
  if (client !== null) {
    const clientCounter = { name: "EMAIL_CLIENT", subject: subjectKey(clientSubject(client)) } as const;
    const refused = await firstExhausted(limits, [clientCounter]);
    if (refused) return refused;
    const raced = await countOn(limits, [clientCounter]);
    if (raced) return raced;
  }
  const address_ = { name: "EMAIL_ADDRESS", subject: subjectKey(address) } as const;
  return (await firstExhausted(limits, [address_])) ?? (await countOn(limits, [address_]));
}

/**
 * `hits` more hits on a single limit at once (the reports of one CSP batch): how many of them fit
 * in what is left of the budget. Those that do not fit are not counted.
 */
export async function countHits(limits: LimitTable, name: LimitName, subject: string, hits: number): Promise<number> {
  if (hits <= 0) return 0;
  const key = subjectKey(subject);
  const state = await limiter(name, limits[name]).penalty(key, hits);
  const over = Math.min(hits, Math.max(0, state.consumedPoints - limits[name].count));
  if (over > 0) await limiter(name, limits[name]).reward(key, over);
  return hits - over;
}

/** One hit on a single limit (e.g. CLIENT_LOG per client address); a refusal when over it. */
export async function countHit(limits: LimitTable, name: LimitName, subject: string): Promise<LimitRefusal | null> {
  const counter = { name, subject: subjectKey(subject) };
  return (await firstExhausted(limits, [counter])) ?? (await countOn(limits, [counter]));
}

/**
 * The second-factor budgets of one attempt: the pending sign-in's (its
 * random id), and the account's — or, from a browser whose device cookie has signed in to this
 * account before (`deviceId`), that device's own instead, as for passwords (ADR 035). Anyone with
 * the password can spend the account's budget with wrong codes; the owner's browser keeps its own,
 * so her right code is still checked. Only wrong codes count; a right one never does.
 */
function secondFactorCounters(pendingId: string | null, userId: string, deviceId: string | null): Counter[] {
  const counters: Counter[] = [
    deviceId === null
      ? { name: "TWO_FACTOR_ACCOUNT", subject: subjectKey("account", userId) }
      : { name: "TWO_FACTOR_DEVICE", subject: subjectKey("device", deviceId, userId) },
  ];
  if (pendingId !== null) counters.unshift({ name: "TWO_FACTOR_PENDING", subject: subjectKey("pending", pendingId) });
  return counters;
}

/** A granted second-factor attempt, already counted: what a wrong code leaves, and the refund for a right one. */
export type SecondFactorReservation = {
  /** Tries the smaller budget still allows if this code is wrong. */
  triesLeftIfWrong: number;
  /** Set when this attempt, if wrong, spent a budget: the pending sign-in ends. */
  endsIfWrong: LimitRefusal | null;
  /** The attempt is taken back without a right code of its own (a twin request finished the sign-in). */
  refund(): Promise<void>;
  /**
   * A right code: the attempt is taken back, and the account's budget and this device's start
   * again. The owner's right code ends whatever wrong codes anyone sent before; an attacker gets
   * a new budget only each time the owner proves a code, never by anything he does himself.
   */
  rightCode(): Promise<void>;
};

export function isSecondFactorRefusal(value: LimitRefusal | SecondFactorReservation): value is LimitRefusal {
  return "limit" in value;
}

/**
 * Checked before a code is looked at, like the credentials reservation: refused when a budget is
 * spent; granted, the attempt is counted at once, so a burst of concurrent guesses cannot all slip
 * under the limit while their codes are checked. `refund()` takes a right code's count back.
 */
export async function reserveSecondFactorAttempt(
  limits: LimitTable,
  pendingId: string | null,
  userId: string,
  deviceId: string | null = null,
): Promise<LimitRefusal | SecondFactorReservation> {
  const counters = secondFactorCounters(pendingId, userId, deviceId);
  const exhausted = await firstExhausted(limits, counters);
  if (exhausted) return exhausted;
  const raced = await countOn(limits, counters);
  if (raced) return raced;
  const states = await Promise.all(counters.map((c) => limiter(c.name, limits[c.name]).get(c.subject)));
  let triesLeftIfWrong = Infinity;
  let endsIfWrong: LimitRefusal | null = null;
  counters.forEach((c, i) => {
    const limit = limits[c.name];
    const consumed = states[i]?.consumedPoints ?? limit.count;
    triesLeftIfWrong = Math.min(triesLeftIfWrong, Math.max(0, limit.count - consumed));
    if (consumed >= limit.count) {
      const retryAfterSeconds = secondsLeft(states[i]?.msBeforeNext ?? 0, limit);
      if (!endsIfWrong || retryAfterSeconds > endsIfWrong.retryAfterSeconds) endsIfWrong = { limit: c.name, retryAfterSeconds };
    }
  });
  return {
    triesLeftIfWrong,
    endsIfWrong,
    async refund() {
      await Promise.all(counters.map((c) => limiter(c.name, limits[c.name]).reward(c.subject, 1)));
    },
    async rightCode() {
      const reset: Counter[] = [{ name: "TWO_FACTOR_ACCOUNT", subject: subjectKey("account", userId) }];
      if (deviceId !== null) reset.push({ name: "TWO_FACTOR_DEVICE", subject: subjectKey("device", deviceId, userId) });
      const pending = counters.filter((c) => c.name === "TWO_FACTOR_PENDING");
      await Promise.all([
        ...reset.map((c) => limiter(c.name, limits[c.name]).delete(c.subject)),
        ...pending.map((c) => limiter(c.name, limits[c.name]).reward(c.subject, 1)),
      ]);
    },
  };
}

/** Marks a pending sign-in finished, apart from its count of wrong codes. */
const finishedKey = (pendingId: string) => subjectKey("pending-finished", pendingId);

/**
 * Ends a pending sign-in for good once its code was accepted: its budget is spent, so the same
 * pending cookie, replayed, cannot be completed a second time, and it is marked finished, so a
 * second submission of it (a double click, a resubmitted form) is told it is done rather than
 * refused as if someone had guessed.
 */
export async function spendPendingSignIn(limits: LimitTable, pendingId: string, pendingLifetimeSeconds: number): Promise<void> {
  const limit = limits.TWO_FACTOR_PENDING;
  // The mark outlives the pending cookie (`pendingLifetimeSeconds`) even when the budget's window
  // is configured shorter: a replay is recognised for as long as the cookie could be read.
  const finished = limiter("TWO_FACTOR_PENDING", { count: limit.count, seconds: Math.max(limit.seconds, pendingLifetimeSeconds) });
  await Promise.all([
    limiter("TWO_FACTOR_PENDING", limit).penalty(subjectKey("pending", pendingId), limit.count),
    finished.penalty(finishedKey(pendingId), 1),
  ]);
}

/** True when a code already finished this pending sign-in (spendPendingSignIn). */
export async function pendingSignInFinished(limits: LimitTable, pendingId: string): Promise<boolean> {
  const state = await limiter("TWO_FACTOR_PENDING", limits.TWO_FACTOR_PENDING).get(finishedKey(pendingId));
  return (state?.consumedPoints ?? 0) > 0;
}

/**
 * One e-mailed code guess, already counted on each address's budget of wrong codes
 * (EMAIL_CODE_ADDRESS). `spent`: the addresses whose budget this guess went past — a request of
 * theirs gets this try as its last (email-code.server.ts), so a right code is still proved and a
 * wrong one ends it. `refusal(address)`: what a guess ended that way is told. `refund(address)`:
 * the code was right for a request of that address, whose count is taken back (only failures
 * count); for the other addresses the same code was a wrong guess, and stays counted. `refund()`:
 * nothing was compared, every count is taken back.
 */
export type EmailCodeGuess = {
  spent: ReadonlySet<string>;
  refusal(address: string): LimitRefusal;
  refund(address?: string): Promise<void>;
};

/**
 * Counts one e-mailed code guess on the budget of each address it is compared with, before the
 * comparison (ADR 103): the count is one atomic increment of the counter row, so of any number of
 * concurrent guesses at most EMAIL_CODE_ADDRESS find the budget unspent. Nothing is refused here:
 * prove, then judge — a right code is accepted even when the budget is spent.
 */
export async function countEmailCodeGuess(limits: LimitTable, addresses: readonly string[]): Promise<EmailCodeGuess> {
  const limit = limits.EMAIL_CODE_ADDRESS;
  const counter = limiter("EMAIL_CODE_ADDRESS", limit);
  const subjectOf = (address: string) => subjectKey("email-code", address);
  const distinct = [...new Set(addresses)];
  const states = await Promise.all(distinct.map((a) => counter.penalty(subjectOf(a), 1)));
  const spent = new Set<string>();
  const retry = new Map<string, number>();
  distinct.forEach((address, i) => {
    const state = states[i]!;
    retry.set(address, secondsLeft(state.msBeforeNext, limit));
    if (state.consumedPoints > limit.count) spent.add(address);
  });
  return {
    spent,
    refusal: (address) => ({ limit: "EMAIL_CODE_ADDRESS", retryAfterSeconds: retry.get(address) ?? limit.seconds }),
    async refund(address) {
      const refunded = address === undefined ? distinct : [address];
      await Promise.all(refunded.map((a) => counter.reward(subjectOf(a), 1)));
    },
  };
}
