// The password policy (NIST SP 800-63B rev. 4), applied wherever a password
// is chosen — sign-up, reset, password-set, password-change — and never at sign-in:
//   length in code points after NFKC, AUTH_PASSWORD_MIN_LENGTH..256 (8..256 while the account's
//   second factor is on: ADR 075), every code point counts; no composition rules;
//   refused when in the bundled common-password list (case-insensitive), when it is one simple
//   pattern — a repeat, a sequence or a keyboard run (./password-patterns.server.ts) —, when it is a
//   listed word or such a pattern with digits, a year or symbols around it or in l33t, when it is the e-mail
//   address or its local part, when it contains a context word (AUTH_PASSWORD_CONTEXT_WORDS, the
//   site's name and host) or a word of the user's name of 4 characters or more, and
//   (AUTH_PASSWORD_BREACH_CHECK=hibp) when the Have I Been Pwned range API lists it. Each reason
//   has its own text (core/errors.ts).
//
// The list: @zxcvbn-ts/language-common's `passwords-common` dictionary (docs/decisions/048).
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { CONTEXT_WORD_MIN_LENGTH, PASSWORD_MIN_LENGTH_WITH_SECOND_FACTOR, type AuthConfig } from "../core/config.server";
import type { PasswordRefusal } from "../core/errors";
import { log } from "../core/log.server";
import { outboundFetch } from "../core/outbound-fetch.server";
import { decoratedWeakness, isSimplePattern } from "./password-patterns.server";
import { t } from "../../i18n/t.server";
import { DEFAULT_SITE_NAME } from "../../site";

/** Longest password accepted when one is chosen, in code points after NFKC. */
export const POLICY_MAX_LENGTH = 256;
/** The breach check waits this long for the range API, then lets the password through. */
export const BREACH_CHECK_TIMEOUT_MS = 2_000;

/** NFKC, as stored and as compared at sign-in: "ﬁ" and "fi", full-width and ASCII digits are one password. */
export function normalizePassword(password: string): string {
  return password.normalize("NFKC");
}

/** Length in Unicode code points (an emoji is one, not two UTF-16 units). */
export function codePointLength(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

let common: Set<string> | null = null;

/**
 * The bundled list, lower-cased, built on first use. The package (its other dictionaries too, about
 * 3 MB of heap) is loaded then, not when the server starts: most requests never choose a password
 * (docs/decisions/094).
 */
export function commonPasswords(): ReadonlySet<string> {
  if (common) return common;
  const { dictionary } = createRequire(import.meta.url)("@zxcvbn-ts/language-common") as typeof import("@zxcvbn-ts/language-common");
  common = new Set(dictionary["passwords-common"].map((p) => p.toLowerCase()));
  return common;
}

export type PolicyResult = { ok: true; password: string } | { ok: false; reason: PasswordRefusal; message: string };

/** Whose password it is: the account's normalised address and name (null when it has none). */
export type PasswordOwner = { email: string | null; name?: string | null; secondFactor?: boolean };

type PolicyConfig = Pick<AuthConfig, "passwordMinLength" | "passwordContextWords">;

/**
 * The shortest password this owner may choose: the single-factor floor (AUTH_PASSWORD_MIN_LENGTH),
 * or 8 while their second factor is on — never more than the floor.
 */
export function minimumLength(owner: Pick<PasswordOwner, "secondFactor">, config: Pick<AuthConfig, "passwordMinLength">): number {
  return owner.secondFactor ? Math.min(PASSWORD_MIN_LENGTH_WITH_SECOND_FACTOR, config.passwordMinLength) : config.passwordMinLength;
}

/**
 * What is stored beside a password's hash (ADR 084): the single-factor floor it meets, or 0 when
 * it is shorter — one bit against the floor in force, never the length itself.
 */
export function singleFactorFloorMet(password: string, config: Pick<AuthConfig, "passwordMinLength">): number {
  return codePointLength(normalizePassword(password)) >= config.passwordMinLength ? config.passwordMinLength : 0;
}

const PASSWORD_REFUSALS: readonly PasswordRefusal[] = ["tooShort", "tooLong", "tooCommon", "commonWord", "simplePattern", "yourAddress", "contextWord", "yourName", "breached"];

/** A reason read back from a URL (a refused form's redirect names it): one of the policy's, or null. */
export function passwordRefusalOf(value: string | null): PasswordRefusal | null {
  return PASSWORD_REFUSALS.find((r) => r === value) ?? null;
}

/** The words of a refusal: the only place they are chosen, for the answer and for the page a redirect leads to. */
export function passwordRefusalMessage(reason: PasswordRefusal, min: number): string {
  return reason === "tooShort" ? t("password.tooShort", { min }) : reason === "tooLong" ? t("password.tooLong", { max: POLICY_MAX_LENGTH }) : t(`password.${reason}`);
}

/**
 * A refused new password named in a redirect's query (Post/Redirect/Get): `reason`, and `min` when
 * the shortest length differs from the page's own. Only the words are chosen by it; the password
 * itself is never in a URL.
 */
const REASON_PARAM = "reason";
const MIN_PARAM = "min";

export function passwordRefusalQuery(reason: PasswordRefusal, min?: number): Record<string, string> {
  return min === undefined ? { [REASON_PARAM]: reason } : { [REASON_PARAM]: reason, [MIN_PARAM]: String(min) };
}

/** The refusal a page's query names: its words, and the shortest length (`floor` unless a smaller one is named). */
export function passwordRefusalFromQuery(params: URLSearchParams, floor: number): { message: string; min: number } | null {
  const reason = passwordRefusalOf(params.get(REASON_PARAM));
  if (!reason) return null;
  const named = Number(params.get(MIN_PARAM));
  // Never above the page's floor, never below the least any account may have.
  const min = params.has(MIN_PARAM) && Number.isSafeInteger(named) ? Math.max(Math.min(named, floor), Math.min(PASSWORD_MIN_LENGTH_WITH_SECOND_FACTOR, floor)) : floor;
  return { message: passwordRefusalMessage(reason, min), min };
}

function refused(reason: PasswordRefusal, min: number): PolicyResult {
  return { ok: false, reason, message: passwordRefusalMessage(reason, min) };
}

/** The words of a name that count (letters and digits, 4 characters or more), lower case. */
function nameWords(name: string | null | undefined): string[] {
  if (!name) return [];
  return normalizePassword(name)
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => codePointLength(w) >= CONTEXT_WORD_MIN_LENGTH);
}

/** The checks that need no network: length, the list, the address, the context words, the name. */
export function checkPasswordLocally(password: string, owner: PasswordOwner, config: PolicyConfig): PolicyResult {
  const min = minimumLength(owner, config);
  const normalized = normalizePassword(password);
  const length = codePointLength(normalized);
  if (length < min) return refused("tooShort", min);
  if (length > POLICY_MAX_LENGTH) return refused("tooLong", min);
  const lower = normalized.toLowerCase();
  if (commonPasswords().has(lower)) return refused("tooCommon", min);
  const listed = (unit: string) => commonPasswords().has(unit);
  if (isSimplePattern(normalized, listed)) return refused("simplePattern", min);
  if (owner.email) {
    const address = owner.email.toLowerCase();
    const local = address.slice(0, address.lastIndexOf("@"));
    if (lower === address || lower === local) return refused("yourAddress", min);
  }
  if (config.passwordContextWords.some((word) => lower.includes(word))) return refused("contextWord", min);
  if (nameWords(owner.name).some((word) => lower.includes(word))) return refused("yourName", min);
  // After the owner's own words: "lovelace#42" for Ada Lovelace is her name, said as such.
  const decorated = decoratedWeakness(normalized, listed);
  if (decorated) return refused(decorated, min);
  return { ok: true, password: normalized };
}

/**
 * The whole policy. On success `password` is the normalised password: the one to hash.
 * Anything that is not a string is refused as too short (a form always sends a string).
 */
export async function checkPassword(
  password: unknown,
  owner: PasswordOwner,
  config: PolicyConfig & Pick<AuthConfig, "passwordBreachCheck"> & Partial<Pick<AuthConfig, "siteName">>,
): Promise<PolicyResult> {
  const min = minimumLength(owner, config);
  if (typeof password !== "string") return refused("tooShort", min);
  const local = checkPasswordLocally(password, owner, config);
  if (!local.ok || !config.passwordBreachCheck) return local;
  return (await breached(local.password, config.passwordBreachCheck.url, config.siteName ?? DEFAULT_SITE_NAME)) ? refused("breached", min) : local;
}

/**
 * Have I Been Pwned's range API with k-anonymity: only the first 5 hex digits of the SHA-1 leave
 * the server; the answer lists suffixes with counts (padded with zero-count decoys, Add-Padding).
 * Fails open: a timeout, a network error or a status other than 200 passes the password and logs
 * one warn line.
 */
export async function breached(normalizedPassword: string, baseUrl: string, siteName: string): Promise<boolean> {
  const digest = createHash("sha1").update(normalizedPassword, "utf8").digest("hex").toUpperCase();
  const prefix = digest.slice(0, 5);
  const suffix = digest.slice(5);
  try {
    const response = await outboundFetch(`${baseUrl}/range/${prefix}`, {
      headers: { "Add-Padding": "true", "User-Agent": `${siteName} password check` },
      signal: AbortSignal.timeout(BREACH_CHECK_TIMEOUT_MS),
      redirect: "error",
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      log("warn", "password.breach_check_unavailable", { reason: `status ${response.status}` });
      return false;
    }
    const body = await response.text();
    for (const line of body.split("\n")) {
      const [listed, count] = line.trim().split(":");
      if (listed?.toUpperCase() === suffix && Number(count) > 0) return true;
    }
    return false;
  } catch (error) {
    const reason = (error as Error)?.name === "TimeoutError" ? "timeout" : "network error";
    log("warn", "password.breach_check_unavailable", { reason });
    return false;
  }
}
