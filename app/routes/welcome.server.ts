import { db } from "~/db/client.server";
// The welcome page's words by the new user's real ways in: the passkey offer names what a passkey
// would replace for her (her password, her provider, or the e-mailed link or code), and the page
// offers to add a name only when she has none.
import type { AuthRequest } from "~/auth/core";
import { getProviders, signInMethods } from "~/auth/signin";
import { t } from "~/i18n/t.server";

export async function welcomeWords(ar: AuthRequest, userId: string, named: boolean): Promise<{ manage: string; passkeyText: string }> {
  const methods = await signInMethods(ar.config, userId);
  const provider = methods?.accounts.find((a) => a.usable);
  const providerName = provider ? (getProviders(ar.config).find((p) => p.id === provider.provider)?.name ?? null) : null;
  const passkeyText = methods?.password
    ? t("welcome.passkeyInsteadOfPassword")
    : providerName
      ? t("welcome.passkeyInsteadOfProvider", { provider: providerName })
      : t("welcome.passkeyInsteadOfEmail");
  return { manage: named ? t("welcome.manageNamed") : t("welcome.manage"), passkeyText };
}

/** How long after its creation /welcome still says the account "has been created": the sign-in that created it, a reload. */
const JUST_CREATED_MS = 15 * 60 * 1000;

/** Whether the account was created moments ago: later visits to /welcome are not told it again. */
export async function createdJustNow(userId: string, now = Date.now()): Promise<boolean> {
  const user = await db().user.findUnique({ where: { id: userId }, select: { createdAt: true } });
  return user !== null && now - user.createdAt.getTime() <= JUST_CREATED_MS;
}
