// The ways a user can sign in, and removing one of them without leaving the user locked out
// (docs/decisions/026-removing-a-way-to-sign-in.md). Which providers are on is handed in by the
// caller (signin/methods.server.ts asks the registry), so this folder knows no sign-in method.
import { db, dbProvider } from "../../db/client.server";

/** The ways a user can sign in, for the removal rule and the /account page. */
export type SignInMethods = {
  password: boolean;
  emailLink: boolean;
  /** Every linked account; `usable` while its provider is configured (only then is it a way in). */
  accounts: { provider: string; type: string; usable: boolean }[];
  /** The user's passkeys, each a way in while passkey sign-in (a `webauthn` provider) is on. */
  passkeys: { id: string; usable: boolean }[];
};

/** One way to sign in that a user may remove. */
export type SignInMethodRef = { kind: "account"; provider: string } | { kind: "password" } | { kind: "passkey"; id: string };

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

/** The providers that are on (signin/registry.server.ts knows them): only their ways in count. */
export type ConfiguredProviders = readonly { id: string; type: string }[];

async function readMethods(client: Tx | ReturnType<typeof db>, providers: ConfiguredProviders, userId: string): Promise<SignInMethods | null> {
  const user = await client.user.findUnique({
    where: { id: userId },
    select: {
      email: true,
      password: { select: { id: true } },
      accounts: { select: { provider: true, type: true } },
      passkeys: { select: { id: true } },
    },
  });
  if (!user) return null;
  const passkeysOn = providers.some((p) => p.type === "webauthn");
  return {
    // A password only counts while credentials sign-in is on; an address only while e-mail sign-in is.
    password: user.password !== null && providers.some((p) => p.type === "credentials"),
    emailLink: user.email !== null && providers.some((p) => p.type === "email"),
    accounts: user.accounts.map((a) => ({ ...a, usable: providers.some((p) => p.id === a.provider) })),
    passkeys: user.passkeys.map((p) => ({ id: p.id, usable: passkeysOn })),
  };
}

export function signInMethods(providers: ConfiguredProviders, userId: string): Promise<SignInMethods | null> {
  return readMethods(db(), providers, userId);
}

/** Whether the user has `method` (a password row counts even while credentials sign-in is off). */
function hasMethod(methods: SignInMethods, method: SignInMethodRef, hasPasswordRow: boolean): boolean {
  if (method.kind === "password") return hasPasswordRow;
  if (method.kind === "passkey") return methods.passkeys.some((p) => p.id === method.id);
  return methods.accounts.some((a) => a.provider === method.provider);
}

/** Whether the user can still sign in once `method` is gone. */
export function canRemove(methods: SignInMethods, method: SignInMethodRef): boolean {
  const accounts = methods.accounts.filter((a) => a.usable && !(method.kind === "account" && a.provider === method.provider));
  const password = methods.password && method.kind !== "password";
  const passkeys = methods.passkeys.filter((p) => p.usable && !(method.kind === "passkey" && p.id === method.id));
  return accounts.length > 0 || password || methods.emailLink || passkeys.length > 0;
}

/** Whether the user can still sign in once `provider`'s account is gone. */
export function canUnlink(methods: SignInMethods, provider: string): boolean {
  return canRemove(methods, { kind: "account", provider });
}

export type RemoveResult = "removed" | "not-found" | "last-method";

/**
 * Removes one way to sign in unless it is the user's last: the check and the delete are one
 * atomic step (docs/decisions/026-removing-a-way-to-sign-in.md), so two removals at once — two
 * tabs, a double submit, an account and a password — can never both pass and leave no way in.
 */
export async function removeSignInMethod(providers: ConfiguredProviders, userId: string, method: SignInMethodRef): Promise<RemoveResult> {
  return db().$transaction(async (tx) => {
    await lockUser(tx, userId);
    const methods = await readMethods(tx, providers, userId);
    if (!methods) return "not-found";
    const hasPasswordRow = method.kind === "password" && (await tx.password.count({ where: { userId } })) > 0;
    if (!hasMethod(methods, method, hasPasswordRow)) return "not-found";
    if (!canRemove(methods, method)) return "last-method";
    const { count } =
      method.kind === "password"
        ? await tx.password.deleteMany({ where: { userId } })
        : method.kind === "passkey"
          ? await tx.passkey.deleteMany({ where: { userId, id: method.id } })
          : await tx.account.deleteMany({ where: { userId, provider: method.provider } });
    return count > 0 ? "removed" : "not-found";
  });
}

/**
 * Makes every other transaction that removes one of this user's ways to sign in wait until this
 * one commits, before anything is read. PostgreSQL (READ COMMITTED): a row lock on the user, after
 * which each statement sees what the previous holder committed. SQLite: a write as the first
 * statement takes the database's write lock at once (transactions start deferred), so no other
 * writer — in this process or another — can commit between the read and the delete.
 */
async function lockUser(tx: Tx, userId: string): Promise<void> {
  if (dbProvider() === "postgres") await tx.$queryRaw`SELECT "id" FROM "User" WHERE "id" = ${userId} FOR UPDATE`;
  else await tx.$executeRaw`UPDATE "User" SET "name" = "name" WHERE "id" = ${userId}`;
}
