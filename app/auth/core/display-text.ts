// The one name rule (issue 31, ADR 108): every name a person or a provider gives — a profile name
// from the sign-up form, the /account profile form, POST /auth/session, an OAuth/OIDC profile,
// `npm run user:add`; a passkey's name — is checked here, and nowhere else. Names are shown back
// on pages, in the session, in /admin and in e-mails, so none may carry characters that are not
// text but steer how text is shown:
//   - C0 and C1 controls and DEL, the line and paragraph separators;
//   - the bidirectional marks, embeddings, overrides and isolates (which make "exe.pdf" read as
//     "fdp.exe");
//   - invisible characters (zero-width space, word joiner, byte-order mark, soft hyphen, fillers),
//     which make two names that look the same differ, or hide a name's end;
//   - a combining mark with nothing to sit on (at the start, after a space) and stacks of more than
//     four (text that spills over the lines around it).
// The joiners U+200C and U+200D stay allowed between two visible characters: emoji sequences and
// several scripts (Persian, the Indic scripts) need them. Names are NFC-normalised and trimmed.
//
// Typed by a person: refused, with the reason (checkName). From a provider's profile, which the
// user did not type and cannot fix here: made safe instead (sanitizeName), never a refused sign-in.

import { z } from "zod";

/** The longest display name, in UTF-16 code units (what a browser's maxlength counts). */
export const MAX_NAME_LENGTH = 100;

const CONTROLS = /[\p{Cc}\u2028\u2029]/u;
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const INVISIBLE = /[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u2060-\u2064\u206a-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb]/u;
/** A joiner not between two visible characters. */
const STRAY_JOINER = /(?:^|[\s\u200c\u200d])[\u200c\u200d]|[\u200c\u200d](?=$|\s)/u;
/** A combining mark with no character before it to sit on. */
const LONE_MARK = /(?:^|\s)\p{M}/u;
const MARK_STACK = /\p{M}{5,}/u;

/** True when `value` holds a character a name may not contain (the header's list). */
export function hasControlCharacters(value: string): boolean {
  return CONTROLS.test(value) || BIDI.test(value) || INVISIBLE.test(value) || STRAY_JOINER.test(value) || LONE_MARK.test(value) || MARK_STACK.test(value);
}

export type NameRefusal = { reason: "empty" } | { reason: "not-text" } | { reason: "too-long"; max: number; length: number };
export type NameCheck = { ok: true; name: string } | ({ ok: false } & NameRefusal);

/** A name typed by a person: normalised and trimmed, or the reason it is refused. */
export function checkName(value: string, max = MAX_NAME_LENGTH): NameCheck {
  const name = value.normalize("NFC").trim();
  if (name === "") return { ok: false, reason: "empty" };
  if (hasControlCharacters(name)) return { ok: false, reason: "not-text" };
  if (name.length > max) return { ok: false, reason: "too-long", max, length: name.length };
  return { ok: true, name };
}

/**
 * A name from a provider's profile, made safe: controls become spaces, the rest of the header's
 * list is dropped, spaces are collapsed, and the name is cut to `max` (never inside a character).
 * Null when nothing is left.
 */
export function sanitizeName(value: unknown, max = MAX_NAME_LENGTH): string | null {
  if (typeof value !== "string") return null;
  let name = value
    .slice(0, max * 8)
    .normalize("NFC")
    .replace(new RegExp(CONTROLS.source, "gu"), " ")
    .replace(new RegExp(BIDI.source, "gu"), "")
    .replace(new RegExp(INVISIBLE.source, "gu"), "");
  // Stray joiners and lone marks, until none is left (removing one can strand the next).
  for (let previous = ""; previous !== name; ) {
    previous = name;
    name = name
      .replace(/(^|[\s\u200c\u200d])[\u200c\u200d]+/gu, "$1")
      .replace(/[\u200c\u200d]+(?=$|\s)/gu, "")
      .replace(/(^|\s)\p{M}+/gu, "$1")
      .replace(/(\p{M}{4})\p{M}+/gu, "$1");
  }
  name = name.replace(/\s+/gu, " ").trim();
  if (name.length > max) {
    let cut = "";
    for (const char of name) {
      if (cut.length + char.length > max) break;
      cut += char;
    }
    name = cut.trim();
    // The cut may leave a joiner or a space at the end.
    name = name.replace(/[\u200c\u200d]+$/u, "").trim();
  }
  return name === "" ? null : name;
}

/**
 * A form or API field holding a typed name: the checked name, or one custom issue whose message
 * is `message(refusal)` and whose `params.refusal` says why (for a caller that words it itself).
 */
export function nameField(max: number, message: (refusal: NameRefusal) => string) {
  return z.string().transform((value, ctx) => {
    const checked = checkName(value, max);
    if (checked.ok) return checked.name;
    ctx.addIssue({ code: "custom", message: message(checked), params: { refusal: checked } });
    return z.NEVER;
  });
}

/** The longest name of a device, passkey or place an e-mail repeats. */
export const MAX_MAIL_NAME_LENGTH = 80;

/**
 * A name an e-mail repeats that someone else may have chosen — the device (from the User-Agent),
 * a passkey's name, the place — as short plain text: made safe like a provider's name, cut to
 * `max`, and with nothing a mail client would turn into a link (a scheme's "://", "www.", a dotted
 * host name are written "[:]//", "www[.]", "evil[.]example"). Null when nothing is left.
 */
export function mailSafeName(value: unknown, max = MAX_MAIL_NAME_LENGTH): string | null {
  const name = sanitizeName(value, max);
  if (name === null) return null;
  return name.replace(/:\/\//g, "[:]//").replace(/([\p{L}\p{N}_-])\.(?=[\p{L}\p{N}_-])/gu, "$1[.]");
}

/**
 * A stored name as an operator must see it (/admin): every character of the header's list that
 * hides or reorders text written out as ⟨U+XXXX⟩, so a name stored before this rule (or straight
 * into the database) cannot pass for another. Null stays null.
 */
export function visibleName(name: string | null): string | null {
  if (name === null) return null;
  const hidden = new RegExp(`${CONTROLS.source}|${BIDI.source}|${INVISIBLE.source}`, "gu");
  return name.replace(hidden, (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`);
}
