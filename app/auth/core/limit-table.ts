// The limits as numbers: their names, defaults and the
// AUTH_RATE_LIMIT_<NAME> overrides (ADR 035). Kept apart from the counters
// (limits.server.ts) so the configuration can read them without reaching the database client.

export const LIMIT_NAMES = [
  "CREDENTIALS_ACCOUNT_CLIENT",
  "CREDENTIALS_CLIENT",
  "CREDENTIALS_ACCOUNT",
  "CREDENTIALS_DEVICE",
  "EMAIL_ADDRESS",
  "EMAIL_CLIENT",
  "CLIENT_LOG",
  "TWO_FACTOR_PENDING",
  "TWO_FACTOR_ACCOUNT",
  "EMAIL_CODE_ADDRESS",
  "TWO_FACTOR_DEVICE",
  "PASSKEY_CLIENT",
  "CSP_REPORT",
  "ACCOUNT_EXPORT",
  "CREDENTIALS_CONSECUTIVE",
  "WASNT_ME_CLIENT",
  "ORG_INVITE",
  "OAUTH_REGISTRATION_CLIENT",
  "DEVICE_CODE_CLIENT",
  "OAUTH_CLIENT_DOCUMENT_CLIENT",
  "SAML_ACS_CLIENT",
  "SAML_ACS_CONNECTION",
] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** At most `count` counted attempts per fixed window of `seconds`, starting at the first one. */
export type Limit = { count: number; seconds: number };
export type LimitTable = Readonly<Record<LimitName, Limit>>;

const MINUTE = 60;
const HOUR = 60 * MINUTE;

export const DEFAULT_LIMITS: LimitTable = {
  CREDENTIALS_ACCOUNT_CLIENT: { count: 5, seconds: 15 * MINUTE },
  CREDENTIALS_CLIENT: { count: 100, seconds: HOUR },
  CREDENTIALS_ACCOUNT: { count: 20, seconds: HOUR },
  CREDENTIALS_DEVICE: { count: 10, seconds: 15 * MINUTE },
  EMAIL_ADDRESS: { count: 5, seconds: HOUR },
  EMAIL_CLIENT: { count: 20, seconds: HOUR },
  CLIENT_LOG: { count: 60, seconds: MINUTE },
  TWO_FACTOR_PENDING: { count: 5, seconds: HOUR },
  TWO_FACTOR_ACCOUNT: { count: 20, seconds: HOUR },
  // Wrong e-mailed codes per address, across its pending requests (ADR 062): 5 sends × 5 tries
  // would otherwise be 25 guesses an hour. Failures only; ten leaves room for every honest typo.
  EMAIL_CODE_ADDRESS: { count: 10, seconds: HOUR },
  // A browser that signed in to the account before: its own budget, apart from the account's
  // (ADR 043); smaller, so a copied device cookie adds little to what the password alone gives.
  TWO_FACTOR_DEVICE: { count: 10, seconds: HOUR },
  // Passkey answers that sign nobody in, per client (ADR 063). A person's own mistakes are rare
  // (a cancelled prompt posts nothing); a client trying many is probing.
  PASSKEY_CLIENT: { count: 30, seconds: 15 * MINUTE },
  // CSP violation reports per client (ADR 073): a page with a broken policy reports every blocked
  // load, so a burst is normal; past this the reports only fill the log.
  CSP_REPORT: { count: 60, seconds: MINUTE },
  // "Download my data" per user (ADR 086): the heaviest read a session can ask for (every event
  // of the account); a person needs it rarely, a script looping on a stolen fresh session should not.
  ACCOUNT_EXPORT: { count: 10, seconds: HOUR },
  // Failed password attempts against one account with no success between (NIST SP 800-63B-4
  // §3.2.2, ADR 083). Never a refusal: past it, browsers without the account's device cookie must
  // also give a code e-mailed to the address. The window only lets a counter nobody touches for a
  // year be cleaned up; a success (any sign-in to the account) resets it.
  CREDENTIALS_CONSECUTIVE: { count: 100, seconds: 365 * 24 * HOUR },
  // "This wasn't me" presses per client (ADR 081): an owner presses once or twice; a client trying
  // many is guessing tokens (hopeless at 256 bits) or replaying links it collected.
  WASNT_ME_CLIENT: { count: 10, seconds: HOUR },
  // New invitations per organization (ADR 147): a team inviting its people sends a few dozen in an
  // hour; a stolen admin session must not turn the organization into a mail cannon.
  ORG_INVITE: { count: 50, seconds: HOUR },
  // Dynamic client registrations per client (AUTH_PROVIDER_REGISTRATION=open, ADR 132): an MCP
  // client registers once per install; a client making many is filling the table.
  OAUTH_REGISTRATION_CLIENT: { count: 10, seconds: HOUR },
  // Codes typed at /device per client (RFC 8628 section 5.1): a person types one or two; a client
  // typing many is guessing someone else's code.
  DEVICE_CODE_CLIENT: { count: 20, seconds: 15 * MINUTE },
  // Client ID metadata documents fetched for one client address (ADR 177): a document is kept for
  // minutes after its first fetch, so a person's tools cost a few; a client naming many URLs is
  // using the server to fetch for it.
  OAUTH_CLIENT_DOCUMENT_CLIENT: { count: 30, seconds: 15 * MINUTE },
  // SAML responses posted to an assertion consumer (/sso/<id>/acs, ADR 167), counted before any
  // XML is read: per client address — a company's office behind one NAT signs many people in
  // around nine o'clock, so generous — and per connection, so that many addresses together cannot
  // make the signature checks of one connection the server's whole work.
  SAML_ACS_CLIENT: { count: 300, seconds: 15 * MINUTE },
  SAML_ACS_CONNECTION: { count: 3000, seconds: 15 * MINUTE },
};

export const LIMIT_ENV_PREFIX = "AUTH_RATE_LIMIT_";
const MAX_LIMIT_COUNT = 1_000_000;
const MAX_LIMIT_SECONDS = 30 * 24 * HOUR;

/**
 * AUTH_RATE_LIMIT_<NAME>=<count>/<seconds> over the defaults. Every problem names its variable:
 * an unknown name (a typo would otherwise silently keep the default), or a value that is not two
 * whole numbers in range.
 */
export function parseLimitOverrides(env: Record<string, string | undefined>): { limits: LimitTable; problems: string[] } {
  const limits: Record<LimitName, Limit> = { ...DEFAULT_LIMITS };
  const problems: string[] = [];
  for (const [variable, raw] of Object.entries(env)) {
    if (!variable.startsWith(LIMIT_ENV_PREFIX) || raw === undefined) continue;
    const name = variable.slice(LIMIT_ENV_PREFIX.length);
    if (!(LIMIT_NAMES as readonly string[]).includes(name)) {
      problems.push(`${variable}: unknown limit; the names are ${LIMIT_NAMES.join(", ")}`);
      continue;
    }
    const match = /^\s*([0-9]{1,7})\s*\/\s*([0-9]{1,8})\s*$/.exec(raw);
    const count = match ? Number(match[1]) : NaN;
    const seconds = match ? Number(match[2]) : NaN;
    if (!(count >= 1 && count <= MAX_LIMIT_COUNT && seconds >= 1 && seconds <= MAX_LIMIT_SECONDS)) {
      problems.push(`${variable} must be <count>/<seconds>, e.g. 5/900 (count 1 to ${MAX_LIMIT_COUNT}, seconds 1 to ${MAX_LIMIT_SECONDS})`);
      continue;
    }
    limits[name as LimitName] = { count, seconds };
  }
  return { limits, problems };
}

/**
 * Whose doing a limit counts, which decides the words of its refusal (ADR 111): a visitor is told
 * "too many attempts" only for attempts that were hers — this browser's, or this pending sign-in's.
 * - own: the visitor's failed attempts (this account from this client, this device, this sign-in);
 * - account: failed attempts on the address from anyone (she may have made none of them);
 * - address: e-mails sent to the address, whoever asked (a sign-up and four links spend it);
 * - network: everything from her client address, which she may share with many people.
 */
export type LimitKind = "own" | "account" | "address" | "network";
export const LIMIT_KINDS = ["own", "account", "address", "network"] as const satisfies readonly LimitKind[];

export const LIMIT_KIND: Readonly<Record<LimitName, LimitKind>> = {
  CREDENTIALS_ACCOUNT_CLIENT: "own",
  CREDENTIALS_CLIENT: "network",
  CREDENTIALS_ACCOUNT: "account",
  CREDENTIALS_DEVICE: "own",
  EMAIL_ADDRESS: "address",
  EMAIL_CLIENT: "network",
  CLIENT_LOG: "network",
  TWO_FACTOR_PENDING: "own",
  TWO_FACTOR_ACCOUNT: "account",
  EMAIL_CODE_ADDRESS: "account",
  TWO_FACTOR_DEVICE: "own",
  PASSKEY_CLIENT: "network",
  CSP_REPORT: "network",
  ACCOUNT_EXPORT: "own",
  CREDENTIALS_CONSECUTIVE: "account",
  WASNT_ME_CLIENT: "network",
  ORG_INVITE: "own",
  OAUTH_REGISTRATION_CLIENT: "network",
  DEVICE_CODE_CLIENT: "network",
  OAUTH_CLIENT_DOCUMENT_CLIENT: "network",
  SAML_ACS_CLIENT: "network",
  SAML_ACS_CONNECTION: "own",
};

/** Why an attempt was refused: the limit, and how long until its window ends. */
export type LimitRefusal = { limit: LimitName; retryAfterSeconds: number };

/** Whole minutes for "Try again in <N> minutes." (at least 1). */
export function retryAfterMinutes(retryAfterSeconds: number): number {
  return Math.max(1, Math.ceil(retryAfterSeconds / 60));
}
