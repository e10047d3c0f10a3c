// The sections of /account, by the id of their card. A form lower on the page posts to
// `/account#<section>` and a change that a section reports lands there, so that without
// JavaScript the browser shows the answer — the setup key, the recovery codes, a refusal, the
// section's notice — where the visitor pressed, not at the top of a long page. With JavaScript,
// React Router keeps the fragment too and scrolls to it. A change a form of a section made is
// reported just above that section (`#<section>-notice`), not at the top of the page.
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

/** `/account?<query>#<section>`: where a form of `section` posts, and where its change lands. */
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
