// Who an OAuth sign-in is (contract §8, docs/decisions/013-account-linking.md):
//
//   known (provider, providerAccountId) ... signed out, or signed in as its user → that user
//                                        ... signed in as someone else          → OAuthAccountNotLinked
//   new account, signed in               ... linked to the signed-in user
//   new account, signed out, e-mail of an existing user                          → OAuthAccountNotLinked
//   new account, signed out, new e-mail  ... a new user (emailVerified only when the provider says so)
//
// An e-mail address never links accounts by itself, verified or not: the person proves they own
// the existing account by signing in to it first, then links from there.
import { db, dbProvider } from "../db/client.server";
import { recordEvent } from "./audit.server";
import type { AuthConfig } from "./core/config.server";
import { AuthError } from "./core/errors";
import { accountTokenColumns, revokeProviderTokens, type TokenSet } from "./oauth-tokens.server";
import { getProviders } from "./providers.server";
import type { OAuthProfile } from "./providers/definition";
import { authRequest, clientAddress } from "./core/request.server";
import { getSession } from "./core/session.server";
import { toSessionUser, type SignInResult } from "./users.server";

export type OAuthSignIn = {
  request: Request;
  config: AuthConfig;
  provider: { id: string; type: "oauth" | "oidc" };
  profile: OAuthProfile;
  tokens: TokenSet;
};

/** Prisma's unique-constraint violation, whichever database is underneath. */
function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
}

export async function signInWithOAuth(input: OAuthSignIn, attempt = 0): Promise<SignInResult> {
  const { request, config, provider, profile, tokens } = input;
  const ar = authRequest(request, config);
  const ip = clientAddress(ar);
  const client = db();
  const key = { provider: provider.id, providerAccountId: profile.id };

  const { session } = await getSession(ar, { roll: false });
  // A stateless session may outlive its user: such a visitor is treated as signed out.
  const current = session ? await client.user.findUnique({ where: { id: session.userId } }) : null;

  const existing = await client.account.findUnique({
    where: { provider_providerAccountId: key },
    include: { user: true },
  });
  const tokenColumns = await accountTokenColumns(provider.id, profile.id, tokens);

  if (existing) {
    if (current && current.id !== existing.userId) {
      throw new AuthError("OAuthAccountNotLinked", { log: `${provider.id} account belongs to another user` });
    }
    await client.account.update({ where: { id: existing.id }, data: tokenColumns });
    return { user: toSessionUser(existing.user), isNewUser: false };
  }

  try {
    if (current) {
      await client.account.create({ data: { ...key, type: provider.type, userId: current.id, ...tokenColumns } });
      await recordEvent("account-linked", { userId: current.id, ip, detail: { provider: provider.id } });
      return { user: toSessionUser(current), isNewUser: false };
    }

    if (profile.email) {
      const owner = await client.user.findUnique({ where: { email: profile.email }, select: { id: true } });
      if (owner) {
        // The same new account arriving twice at once: the other callback may have just created
        // this user and account. Then it is a known account, not someone else's address.
        if (attempt === 0 && (await client.account.findUnique({ where: { provider_providerAccountId: key }, select: { id: true } }))) {
          return signInWithOAuth(input, 1);
        }
        await recordEvent("signin-failed", { userId: owner.id, ip, detail: { provider: provider.id, code: "OAuthAccountNotLinked" } });
        throw new AuthError("OAuthAccountNotLinked", { log: `${provider.id} e-mail belongs to an existing user` });
      }
    }

    // Only an address the provider has verified becomes the user's. An unverified one may name
    // somebody else's mailbox, whose owner would later sign in by e-mail link straight into (and
    // verify) the account this provider created, with the provider account still attached.
    const email = profile.email && profile.emailVerified ? profile.email : null;
    // User and account in one transaction: a failure leaves neither behind.
    const user = await client.$transaction(async (tx) => {
      const created = await tx.user.create({
        data: {
          email,
          emailVerified: email ? new Date() : null,
          name: profile.name,
          image: profile.image,
        },
      });
      await tx.account.create({ data: { ...key, type: provider.type, userId: created.id, ...tokenColumns } });
      return created;
    });
    await recordEvent("user-created", { userId: user.id, ip, detail: { provider: provider.id, emailVerified: user.emailVerified !== null } });
    return { user: toSessionUser(user), isNewUser: true };
  } catch (error) {
    if (error instanceof AuthError) throw error;
    // Two callbacks for the same new account (double submit, two tabs) race on the unique keys:
    // the loser starts over and finds what the winner created.
    if (isUniqueViolation(error) && attempt === 0) return signInWithOAuth(input, 1);
    throw new AuthError(current ? "OAuthCallback" : "OAuthCreateAccount", { cause: error, log: "could not store the account" });
  }
}

/** The ways a user can sign in, for the removal rule and the /account page. */
export type SignInMethods = {
  password: boolean;
  emailLink: boolean;
  /** Every linked account; `usable` while its provider is configured (only then is it a way in). */
  accounts: { provider: string; type: string; usable: boolean }[];
};

/** One way to sign in that a user may remove. */
export type SignInMethodRef = { kind: "account"; provider: string } | { kind: "password" };

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

async function readMethods(client: Tx | ReturnType<typeof db>, config: AuthConfig, userId: string): Promise<SignInMethods | null> {
  const user = await client.user.findUnique({
    where: { id: userId },
    select: { email: true, password: { select: { id: true } }, accounts: { select: { provider: true, type: true } } },
  });
  if (!user) return null;
  const providers = getProviders(config);
  return {
    // A password only counts while credentials sign-in is on; an address only while e-mail sign-in is.
    password: user.password !== null && providers.some((p) => p.type === "credentials"),
    emailLink: user.email !== null && providers.some((p) => p.type === "email"),
    accounts: user.accounts.map((a) => ({ ...a, usable: providers.some((p) => p.id === a.provider) })),
  };
}

export function signInMethods(config: AuthConfig, userId: string): Promise<SignInMethods | null> {
  return readMethods(db(), config, userId);
}

/** Whether the user has `method` (a password row counts even while credentials sign-in is off). */
function hasMethod(methods: SignInMethods, method: SignInMethodRef, hasPasswordRow: boolean): boolean {
  return method.kind === "password" ? hasPasswordRow : methods.accounts.some((a) => a.provider === method.provider);
}

/** Whether the user can still sign in once `method` is gone. */
export function canRemove(methods: SignInMethods, method: SignInMethodRef): boolean {
  const accounts = methods.accounts.filter((a) => a.usable && !(method.kind === "account" && a.provider === method.provider));
  const password = methods.password && method.kind !== "password";
  return accounts.length > 0 || password || methods.emailLink;
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
export async function removeSignInMethod(config: AuthConfig, userId: string, method: SignInMethodRef): Promise<RemoveResult> {
  return db().$transaction(async (tx) => {
    await lockUser(tx, userId);
    const methods = await readMethods(tx, config, userId);
    if (!methods) return "not-found";
    const hasPasswordRow = method.kind === "password" && (await tx.password.count({ where: { userId } })) > 0;
    if (!hasMethod(methods, method, hasPasswordRow)) return "not-found";
    if (!canRemove(methods, method)) return "last-method";
    const { count } =
      method.kind === "password"
        ? await tx.password.deleteMany({ where: { userId } })
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

export type UnlinkResult = "unlinked" | "not-linked" | "last-method";

/**
 * Removes the user's account at `provider` when another way to sign in remains, after revoking
 * the tokens Vestibule holds for it. The rule is checked first so that a refused unlink revokes
 * nothing, and again, atomically with the delete, by removeSignInMethod.
 */
export async function unlinkAccount(config: AuthConfig, userId: string, provider: string, ip: string | null = null): Promise<UnlinkResult> {
  const before = await signInMethods(config, userId);
  if (!before || !before.accounts.some((a) => a.provider === provider)) return "not-linked";
  if (!canUnlink(before, provider)) return "last-method";
  await revokeProviderTokens(userId, config, { provider });
  const result = await removeSignInMethod(config, userId, { kind: "account", provider });
  if (result === "not-found") return "not-linked";
  if (result === "last-method") return "last-method";
  await recordEvent("account-unlinked", { userId, ip, detail: { provider } });
  return "unlinked";
}
