// Names people choose (their profile name, a passkey's name) are shown back on pages, in the
// session and in lists. One rule for what they may not contain: characters that are not text but
// steer how text is shown — C0 and C1 controls and DEL, the bidirectional marks, embeddings,
// overrides and isolates (which can make "exe.pdf" read as "fdp.exe"), and the line and paragraph
// separators. Joiners (U+200C, U+200D) stay allowed: emoji sequences and several scripts need them.

const NOT_TEXT = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

/** True when `value` holds a character a chosen name may not contain. */
export function hasControlCharacters(value: string): boolean {
  return NOT_TEXT.test(value);
}
