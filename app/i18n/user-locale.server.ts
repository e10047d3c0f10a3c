// The user's own language (issue 31, ADR 108): kept on the user row, so that every e-mail to the
// account's owner is written in the owner's language — never in the language of whoever made the
// change (a thief's `Accept-Language: ar` must not send the owner an Arabic alert).
//
// Written when the account is created (the request that created it: the owner's own browser), and
// when the signed-in user picks a language in the menu with a recent sign-in (a copy of an old
// session cookie cannot switch the owner's alerts into a language they do not read). An ordinary
// sign-in never writes it: a thief's sign-in looks the same as the owner's.
import { db } from "../db/client.server";
import { DEFAULT_LOCALE, isLocale, type Locale } from "./languages.server";
import { currentLocale, runWithLocale } from "./t.server";

/** Whom an e-mail is for: a user id, or the address it goes to (which may have no account). */
export type Recipient = { userId: string } | { address: string };

/** The stored language of the user, or null (no such user, or none stored yet). */
export async function storedLocale(who: Recipient): Promise<Locale | null> {
  const where = "userId" in who ? { id: who.userId } : { email: who.address };
  const row = await db().user.findUnique({ where, select: { locale: true } });
  return isLocale(row?.locale) ? row.locale : null;
}

/**
 * What to write in when the user has no stored language: "request" for a message the visitor asked
 * for themselves and is about to use (a sign-in link, a code, a reset link), whose address may
 * have no account; "default" (English) for a notice of a change, which the requester must not
 * choose the language of.
 */
export type Fallback = "request" | "default";

/** Runs `render` so that every `t` in it writes in the recipient's language. */
export async function inRecipientLanguage<T>(who: Recipient, fallback: Fallback, render: () => T | Promise<T>): Promise<T> {
  const locale = (await storedLocale(who)) ?? (fallback === "request" ? currentLocale() : DEFAULT_LOCALE);
  return runWithLocale(locale, render);
}

/** The owner's choice: the language every later e-mail to them is written in. */
export async function rememberLocale(userId: string, locale: Locale): Promise<void> {
  await db().user.updateMany({ where: { id: userId }, data: { locale } });
}
