// Who an OAuth sign-in is (docs/decisions/013-account-linking.md):
//
//   known (provider, providerAccountId) ... signed out, or signed in as its user → that user
//                                        ... signed in as someone else          → OAuthAccountNotLinked,
//                                                                                 back on /account with its notice
//   new account, signed in recently      ... linked to the signed-in user, who keeps their session
//   new account, signed in long ago      → ReauthRequired (ADR 058): a copied cookie links nothing
//   new account, signed out, e-mail of an existing user                          → OAuthAccountNotLinked
//   new account, signed out, new e-mail  ... a new user (emailVerified only when the provider says so)
//
// An e-mail address never links accounts by itself, verified or not: the person proves they own
// the existing account by signing in to it first, then links from there.
import { sanitizeName } from "../core/display-text";
import { db } from "../../db/client.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { accountCredentialRef, toSessionUser, type SignInResult } from "../accounts/users.server";
import type { AuthConfig } from "../core/config.server";
import { AuthError } from "../core/errors";
import { authRequest, clientAddress } from "../core/request.server";
import { isRecentAuth } from "../core/recent-auth.server";
import { getSession } from "../core/session.server";
import { notifySecurityChange, sendQueuedNotices } from "../accounts/security-notices.server";
import type { OAuthProfile } from "./presets/definition";
import { accountTokenColumns, type TokenSet } from "./tokens.server";

export type OAuthSignIn = {
  request: Request;
  config: AuthConfig;
  provider: { id: string; type: "oauth" | "oidc"; name?: string };
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
      // Signed in, she stays so: back on her account page, which says the account is someone else's.
      throw new AuthError("OAuthAccountNotLinked", { log: `${provider.id} account belongs to another user`, landing: "/account?updated=link-taken" });
    }
    await client.account.update({ where: { id: existing.id }, data: tokenColumns });
    return { user: toSessionUser(existing.user), isNewUser: false, credentialRef: accountCredentialRef(existing.id) };
  }

  // Linking adds a lasting way into the signed-in account: only a recent sign-in may (ADR 058).
  // Decided here, not when the flow starts: only the answer tells a new account (a link) from the
  // owner's own (signing in again, which is how an old session becomes recent).
  if (current && session && !(await isRecentAuth(ar, session))) {
    await recordEvent("signin-failed", { userId: current.id, ...eventSource(ar), detail: { provider: provider.id, code: "ReauthRequired" } });
    throw new AuthError("ReauthRequired", { log: `${provider.id} link refused: the session's sign-in is not recent` });
  }

  try {
    if (current) {
      const linked = await client.$transaction(async (tx) => {
        const account = await tx.account.create({ data: { ...key, type: provider.type, userId: current.id, ...tokenColumns } });
        await notifySecurityChange(ar, current.id, { kind: "account-linked", provider: provider.name ?? provider.id }, { tx });
        return account;
      });
      sendQueuedNotices();
      await recordEvent("account-linked", { userId: current.id, ...eventSource(ar), detail: { provider: provider.id } });
      return { user: toSessionUser(current), isNewUser: false, linked: true, credentialRef: accountCredentialRef(linked.id) };
    }

    if (profile.email) {
      const owner = await client.user.findUnique({ where: { email: profile.email }, select: { id: true } });
      if (owner) {
        // The same new account arriving twice at once: the other callback may have just created
        // this user and account. Then it is a known account, not someone else's address.
        if (attempt === 0 && (await client.account.findUnique({ where: { provider_providerAccountId: key }, select: { id: true } }))) {
          return signInWithOAuth(input, 1);
        }
        await recordEvent("signin-failed", { userId: owner.id, ...eventSource(ar), detail: { provider: provider.id, code: "OAuthAccountNotLinked" } });
        throw new AuthError("OAuthAccountNotLinked", { log: `${provider.id} e-mail belongs to an existing user` });
      }
    }

    // Only an address the provider has verified becomes the user's. An unverified one may name
    // somebody else's mailbox, whose owner would later sign in by e-mail link straight into (and
    // verify) the account this provider created, with the provider account still attached.
    const email = profile.email && profile.emailVerified ? profile.email : null;
    // User and account in one transaction: a failure leaves neither behind.
    const { user, account } = await client.$transaction(async (tx) => {
      const created = await tx.user.create({
        data: {
          email,
          emailVerified: email ? new Date() : null,
          // Not typed by the user: made safe by the one name rule, never a refused sign-in.
          name: sanitizeName(profile.name),
          image: profile.image,
        },
      });
      const account = await tx.account.create({ data: { ...key, type: provider.type, userId: created.id, ...tokenColumns } });
      return { user: created, account };
    });
    await recordEvent("user-created", { userId: user.id, ...eventSource(ar), detail: { provider: provider.id, emailVerified: user.emailVerified !== null } });
    return { user: toSessionUser(user), isNewUser: true, credentialRef: accountCredentialRef(account.id) };
  } catch (error) {
    if (error instanceof AuthError) throw error;
    // Two callbacks for the same new account (double submit, two tabs) race on the unique keys:
    // the loser starts over and finds what the winner created.
    if (isUniqueViolation(error) && attempt === 0) return signInWithOAuth(input, 1);
    throw new AuthError(current ? "OAuthCallback" : "OAuthCreateAccount", { cause: error, log: "could not store the account" });
  }
}
