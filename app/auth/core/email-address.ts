// One rule for what counts as an e-mail address, used wherever an address enters: the e-mail
// sign-in form, the address in a sign-in link, and "change your e-mail address" on /account.
//
// The address is normalised first (NFKC, lower-case, trimmed) and only then validated, so that
// what is checked is exactly what is stored, compared and handed to the mail server. Auth.js's
// advisories came from the two drifting apart: a comma-separated list reached nodemailer as
// several recipients (GHSA-xv97-c62v-4587), a quoted local part hid a second "@" from the check
// but not from the mail parser (GHSA-5jpx-9hw9-2fx4), and a full-width "＠" became a real "@"
// only after validation (GHSA-7rqj-j65f-68wh). Here an address must be one plain addr-spec:
// dot-atom local part, one "@", a host name with at least one dot; anything an address parser
// could read as a quote, comment, group, list or route is refused rather than repaired.

export type AddressCheck = { ok: true; address: string } | { ok: false; reason: string };

/** Longer input is refused before NFKC touches it (normalisation can grow a string). */
const MAX_INPUT_LENGTH = 1024;
/**
 * RFC 5321: a forward-path is at most 256 octets including the angle brackets. The one maximum
 * for an address anywhere: form fields, schemas, echoes of typed input.
 */
export const MAX_EMAIL_ADDRESS_LENGTH = 254;
const MAX_LOCAL_LENGTH = 64;
const MAX_DOMAIN_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;

// RFC 5322 atext, widened to Unicode letters, marks and digits (RFC 6531 addresses).
const ATOM = /^[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+$/u;
const LABEL = /^[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]*[\p{L}\p{M}\p{N}])?$/u;
// Separators, control and format characters (zero-width joiners, bidi overrides) and unassigned
// or private-use code points: none belongs in an address, and some would hide what it says.
const INVISIBLE = /[\p{Z}\p{C}\s]/u;
// Characters with a meaning in address headers: quotes, comments, routes, groups, lists.
const SPECIALS = /["\\(),:;<>[\]]/;

function fail(reason: string): AddressCheck {
  return { ok: false, reason };
}

/** NFKC, lower-case, trim — then the checks above. Idempotent on its own output. */
export function normalizeEmailAddress(input: unknown): AddressCheck {
  if (typeof input !== "string") return fail("missing");
  if (input.length > MAX_INPUT_LENGTH) return fail("too long");
  // Lower-casing can leave a string that is no longer NFKC (e.g. "İ" → "i̇"), so normalise again.
  const address = input.normalize("NFKC").toLowerCase().normalize("NFKC").trim();
  if (address === "") return fail("empty");
  if (address.length > MAX_EMAIL_ADDRESS_LENGTH) return fail("too long");
  if (INVISIBLE.test(address)) return fail("space or control character");
  if (SPECIALS.test(address)) return fail("quote, comma or other special character");

  const parts = address.split("@");
  if (parts.length !== 2) return fail(parts.length < 2 ? "no @" : "more than one @");
  const [local, domain] = parts as [string, string];

  if (local.length === 0 || local.length > MAX_LOCAL_LENGTH) return fail("local part length");
  if (!local.split(".").every((atom) => ATOM.test(atom))) return fail("local part");

  if (domain.length === 0 || domain.length > MAX_DOMAIN_LENGTH) return fail("domain length");
  const labels = domain.split(".");
  if (labels.length < 2) return fail("domain without a dot");
  if (!labels.every((label) => label.length <= MAX_LABEL_LENGTH && LABEL.test(label))) return fail("domain");
  // An all-digit top-level label is an IP address in disguise, not a host name.
  if (/^\d+$/.test(labels.at(-1)!)) return fail("numeric top-level domain");

  return { ok: true, address };
}
