// Users as the session layer sees them.
import { z } from "zod";
import { db } from "../../db/client.server";
import type { SessionUser } from "../core/session.server";
import { MAX_NAME_LENGTH, nameField, type NameRefusal } from "../core/display-text";
import { nameRefusalMessage } from "../core/messages.server";
import { inEnglish } from "../../i18n/t.server";


export function toSessionUser(u: { id: string; name: string | null; email: string | null; image: string | null }): SessionUser {
  return { id: u.id, name: u.name, email: u.email, image: u.image };
}

export const ProfileUpdate = z
  .object({
    // The one name rule (core/display-text.ts); the JSON endpoint's words stay English.
    name: nameField(MAX_NAME_LENGTH, (refusal) => nameRefusalMessage(refusal, "account.nameEmpty", inEnglish)).optional(),
    image: z
      .union([z.literal(""), z.url({ protocol: /^https?$/, error: "Image must be an http(s) URL." }).max(2048)])
      .optional(),
  })
  .strict();

export type ProfileUpdate = z.infer<typeof ProfileUpdate>;

/** Null when the user no longer exists (a stateless session can outlive its user). */
export async function updateProfile(userId: string, update: ProfileUpdate): Promise<SessionUser | null> {
  const data: { name?: string; image?: string | null } = {};
  if (update.name !== undefined) data.name = update.name;
  if (update.image !== undefined) data.image = update.image === "" ? null : update.image;
  const { count } = await db().user.updateMany({ where: { id: userId }, data });
  if (count === 0) return null;
  return toSessionUser(await db().user.findUniqueOrThrow({ where: { id: userId } }));
}

/**
 * What every strategy's verify step resolves to. `credentialRef`: the stored way in that proved it
 * ("account:<id>", "passkey:<id>"), recorded on the session so that removing it ends the session.
 * `linked`: an OAuth account was added to the signed-in user, who stays in
 * the session they have (no new sign-in).
 */
export type SignInResult = { user: SessionUser; isNewUser: boolean; credentialRef?: string | null; linked?: boolean };

/** The credentialRef of a linked provider account and of a passkey. */
export const accountCredentialRef = (accountId: string) => `account:${accountId}`;
export const passkeyCredentialRef = (passkeyId: string) => `passkey:${passkeyId}`;

/** Whether an administrator disabled this user (ADR 078); read at every sign-in, never cached. */
export async function isDisabled(userId: string): Promise<boolean> {
  const user = await db().user.findUnique({ where: { id: userId }, select: { disabledAt: true } });
  return Boolean(user?.disabledAt);
}

/** Why a name in a refused ProfileUpdate was refused, when that is what was refused. */
export function nameRefusalOf(issue: { params?: Record<string, unknown> }): NameRefusal | null {
  return (issue.params?.refusal as NameRefusal | undefined) ?? null;
}
