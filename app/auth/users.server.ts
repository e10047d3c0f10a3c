// Users as the session layer sees them.
import { z } from "zod";
import { db } from "../db/client.server";
import { normalizeEmailAddress } from "./core/email-address";
import type { SessionUser } from "./core/session.server";
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "./password.server";


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
      .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), "Name cannot contain control characters.")
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

/** A schema field for an e-mail address, read by the one rule: the normalised address or an issue. */
export function emailAddressField(message = "email must be one valid address") {
  return z.unknown().transform((value, ctx) => {
    const check = normalizeEmailAddress(value);
    if (check.ok) return check.address;
    ctx.issues.push({ code: "custom", message, input: value });
    return z.NEVER;
  });
}

/** What every strategy's verify step resolves to. */
export type SignInResult = { user: SessionUser; isNewUser: boolean };

export const CredentialsUserInput = z.object({
  email: emailAddressField(),
  password: z
    .string()
    .min(MIN_PASSWORD_LENGTH, `password must be at least ${MIN_PASSWORD_LENGTH} characters`)
    .max(MAX_PASSWORD_LENGTH, `password must be at most ${MAX_PASSWORD_LENGTH} characters`),
  name: z.string().trim().min(1).max(100).optional(),
});

/** Creates or updates a user who signs in with a password (`npm run user:add`, the dev seed, tests). */
export async function upsertCredentialsUser(input: z.input<typeof CredentialsUserInput>) {
  const { email, password, name } = CredentialsUserInput.parse(input);
  const hash = await hashPassword(password);
  return db().$transaction(async (tx) => {
    const before = await tx.user.findUnique({ where: { email }, select: { id: true } });
    const user = await tx.user.upsert({
      where: { email },
      create: { email, name: name ?? null },
      update: name ? { name } : {},
    });
    await tx.password.upsert({ where: { userId: user.id }, create: { userId: user.id, hash }, update: { hash } });
    return { user: toSessionUser(user), created: before === null };
  });
}
