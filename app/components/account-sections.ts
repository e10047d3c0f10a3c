// The sections of /account, by the id of their card. A form lower on the page posts to
// `/account#<section>` and a change that a section reports lands there, so that without
// JavaScript the browser shows the answer — the setup key, the recovery codes, a refusal, the
// section's notice — where the visitor pressed, not at the top of a long page. With JavaScript,
// React Router keeps the fragment too and scrolls to it.
export const ACCOUNT_SECTION = {
  profile: "profile",
  email: "email-change",
  waysIn: "ways-in",
  password: "password",
  passkeys: "passkeys",
  twoFactor: "two-factor",
  deleteAccount: "delete-account",
} as const;

export type AccountSection = (typeof ACCOUNT_SECTION)[keyof typeof ACCOUNT_SECTION];

/** `/account?<query>#<section>`: where a form of `section` posts, and where its change lands. */
export function accountAt(section: AccountSection, query: Record<string, string> = {}): string {
  const search = new URLSearchParams(query).toString();
  return `/account${search ? `?${search}` : ""}#${section}`;
}
