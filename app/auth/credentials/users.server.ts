// Password users outside the sign-in form (`npm run user:add`, the dev seed, tests), and the
// address field every credentials schema reads by the one rule (core/email-address.ts).
import { z } from "zod";
import { MAX_NAME_LENGTH, nameField } from "../core/display-text";
import { nameRefusalMessage } from "../core/messages.server";
import { inEnglish } from "../../i18n/t.server";
import { db, type Db } from "../../db/client.server";
import { toSessionUser } from "../accounts/users.server";
import { normalizeEmailAddress } from "../core/email-address";
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "./password.server";
import { singleFactorFloorMet as floorMet } from "./password-policy.server";
import { getConfig } from "../core/config.server";

/** A schema field for an e-mail address, read by the one rule: the normalised address or an issue. */
export function emailAddressField(message = "email must be one valid address") {
  return z.unknown().transform((value, ctx) => {
    const check = normalizeEmailAddress(value);
    if (check.ok) return check.address;
    ctx.issues.push({ code: "custom", message, input: value });
    return z.NEVER;
  });
}

export const CredentialsUserInput = z.object({
  email: emailAddressField(),
  password: z
    .string()
    .min(MIN_PASSWORD_LENGTH, `password must be at least ${MIN_PASSWORD_LENGTH} characters`)
    .max(MAX_PASSWORD_LENGTH, `password must be at most ${MAX_PASSWORD_LENGTH} characters`),
  // The one name rule (core/display-text.ts), in the command line's English.
  name: nameField(MAX_NAME_LENGTH, (refusal) => `name: ${nameRefusalMessage(refusal, "account.nameEmpty", inEnglish)}`).optional(),
});

/**
 * Creates or updates a user who signs in with a password (`npm run user:add`, the dev seed, tests).
 * `client`: another database than the configured one (a test seeding a running server's database).
 */
export async function upsertCredentialsUser(input: z.input<typeof CredentialsUserInput>, client: Db = db()) {
  const { email, password, name } = CredentialsUserInput.parse(input);
  const hash = await hashPassword(password);
  return client.$transaction(async (tx) => {
    const before = await tx.user.findUnique({ where: { email }, select: { id: true } });
    const user = await tx.user.upsert({
      where: { email },
      create: { email, name: name ?? null },
      update: name ? { name } : {},
    });
    const singleFactorFloorMet = floorMet(password, getConfig());
    await tx.password.upsert({ where: { userId: user.id }, create: { userId: user.id, hash, singleFactorFloorMet }, update: { hash, singleFactorFloorMet } });
    return { user: toSessionUser(user), created: before === null };
  });
}
