// The /account page's "Ways to sign in": linked provider accounts, linking another (a CSRF POST
// to /auth/signin/<id> while signed in, which links on return: app/auth/oauth/link.server.ts), and
// the "unlink-account" intent, refused when it would remove the last way to sign in.
import { data, redirect } from "react-router";
import { ACCOUNT_SECTION, accountAt } from "~/components/account-sections";
import { t } from "~/i18n/t.server";
import { z } from "zod";
import { type AuthRequest } from "~/auth/core";
import type { CurrentSession } from "~/auth/core/session.server";
import { signedOutByRemoval } from "./account-removal.server";
// Directly: core/index.ts is being reworked alongside the session list.
import { idField } from "~/auth/core/ids";
import { canUnlink, getProviders, signInMethods, unlinkAccount } from "~/auth/signin";

export type LinkedAccounts = {
  password: boolean;
  emailLink: boolean;
  linked: { provider: string; name: string; canUnlink: boolean }[];
  linkable: { id: string; name: string; signinUrl: string }[];
  notice: string | null;
};

export async function linkedAccountsData(ar: AuthRequest, userId: string): Promise<LinkedAccounts> {
  const methods = (await signInMethods(ar.config, userId)) ?? { password: false, emailLink: false, accounts: [], passkeys: [] };
  const oauth = getProviders(ar.config).filter((p) => p.type === "oauth" || p.type === "oidc");
  const nameOf = (id: string) => oauth.find((p) => p.id === id)?.name ?? id;
  const updated = ar.url.searchParams.get("updated");
  // The query is anyone's to write (a link in a message): the notice names only a configured
  // provider, and only as linked when the account has it, as removed when it does not. Anything
  // else shows no notice, never the query's words.
  const asked = oauth.find((p) => p.id === ar.url.searchParams.get("provider"));
  const isLinked = asked ? methods.accounts.some((a) => a.provider === asked.id) : false;
  return {
    password: methods.password,
    emailLink: methods.emailLink,
    linked: methods.accounts
      .filter((a) => a.type === "oauth" || a.type === "oidc")
      .map((a) => ({ provider: a.provider, name: nameOf(a.provider), canUnlink: canUnlink(methods, a.provider) })),
    linkable: oauth
      .filter((p) => !methods.accounts.some((a) => a.provider === p.id))
      .map((p) => ({ id: p.id, name: p.name, signinUrl: `${ar.config.basePath}/signin/${p.id}` })),
    notice:
      asked && updated === "unlinked" && !isLinked
        ? t("methods.unlinked", { name: asked.name })
        : asked && updated === "linked" && isLinked
          ? t("methods.linked", { name: asked.name })
          : null,
  };
}

const UnlinkBody = z.object({ provider: idField() });

export async function unlinkAccountIntent(ar: AuthRequest, session: CurrentSession, body: Record<string, unknown>) {
  const parsed = UnlinkBody.safeParse(body);
  if (!parsed.success) return data({ formError: t("common.unknownRequest"), fieldErrors: {} }, { status: 400 });
  const { result, endedSessions } = await unlinkAccount(ar, session.userId, parsed.data.provider);
  if (result === "last-method") {
    return data(
      { formError: t("methods.lastMethod"), fieldErrors: {} },
      { status: 409 },
    );
  }
  if (result === "not-linked") return data({ formError: t("methods.notLinked"), fieldErrors: {} }, { status: 404 });
  // This session was started with that account: it ended with the others.
  if (session.sessionId && endedSessions.includes(session.sessionId)) await signedOutByRemoval(ar);
  throw redirect(accountAt(ACCOUNT_SECTION.waysIn, { updated: "unlinked", provider: parsed.data.provider }));
}
