// Users as the session layer sees them.
import { z } from "zod";
import { db } from "../../db/client.server";
import type { SessionUser } from "../core/session.server";
import { hasControlCharacters } from "../core/display-text";


export function toSessionUser(u: { id: string; name: string | null; email: string | null; image: string | null }): SessionUser {
  return { id: u.id, name: u.name, email: u.email, image: u.image };
}

export const ProfileUpdate = z
  .object({
    name: z
      .string()
      .trim()
      .min(1, "Name cannot be empty.")
      .max(100, "Name must be at most 100 characters.")
      .refine((v) => !hasControlCharacters(v), "Name cannot contain control characters.")
      .optional(),
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
 * ("account:<id>", "passkey:<id>"), recorded on the session so that removing it ends the session
 * (contract section 13). `linked`: an OAuth account was added to the signed-in user, who stays in
 * the session they have (no new sign-in).
 */
export type SignInResult = { user: SessionUser; isNewUser: boolean; credentialRef?: string | null; linked?: boolean };

/** The credentialRef of a linked provider account and of a passkey. */
export const accountCredentialRef = (accountId: string) => `account:${accountId}`;
export const passkeyCredentialRef = (passkeyId: string) => `passkey:${passkeyId}`;
