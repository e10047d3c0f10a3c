// The sections of /account, by the id of their card (ADR 114). A change a section's form made
// lands on its notice, just above the card (`#<section>-notice`), or on the card when the card
// shows its own notice (passkeys, ways in): without JavaScript the browser opens the page there,
// not at the top of a long page; with JavaScript React Router scrolls to the fragment. An answer
// rendered in place (a refusal, the setup key, recovery codes) is focused instead (autofocus),
// which scrolls to it: a fragment on the form would stop the browser from focusing anything.
export const ACCOUNT_SECTION = {
  profile: "profile",
  email: "email-change",
  waysIn: "ways-in",
  password: "password",
  passkeys: "passkeys",
  twoFactor: "two-factor",
  sessions: "devices",
  deleteAccount: "delete-account",
} as const;

export type AccountSection = (typeof ACCOUNT_SECTION)[keyof typeof ACCOUNT_SECTION];

/**
 * Where every form of /account posts: the path alone. A form without an action posts to the URL
 * it is on, query included, so the `?updated=` notice of an earlier change would show again beside
 * the answer to this one; with the path alone a notice shows once, for the change that caused it.
 */
export const ACCOUNT_FORM_ACTION = "/account";

/** `/account?<query>#<section>`: where a change reported inside `section` lands. */
export function accountAt(section: AccountSection, query: Record<string, string> = {}): string {
  const search = new URLSearchParams(query).toString();
  return `/account${search ? `?${search}` : ""}#${section}`;
}

/** Which section's form each `?updated=` notice answers; a notice not listed shows at the top of the page. */
export const NOTICE_SECTION: Readonly<Record<string, AccountSection>> = {
  profile: ACCOUNT_SECTION.profile,
  session: ACCOUNT_SECTION.sessions,
  others: ACCOUNT_SECTION.sessions,
  "password-set": ACCOUNT_SECTION.password,
  "password-changed": ACCOUNT_SECTION.password,
  "password-removed": ACCOUNT_SECTION.password,
  "two-factor-off": ACCOUNT_SECTION.twoFactor,
};

/** The id of the notice shown above `section`. */
export function noticeAnchor(section: AccountSection): string {
  return `${section}-notice`;
}

/** Where a change made by a section's form lands: `/account?updated=<notice>#<section>-notice`. */
export function accountNoticeAt(updated: keyof typeof NOTICE_SECTION & string): string {
  const section = NOTICE_SECTION[updated]!;
  return `/account?${new URLSearchParams({ updated })}#${noticeAnchor(section)}`;
}

/** The section a `?updated=` notice belongs to, or null for the top of the page. */
export function noticeSectionOf(updated: string | null): AccountSection | null {
  return updated && Object.hasOwn(NOTICE_SECTION, updated) ? NOTICE_SECTION[updated]! : null;
}
