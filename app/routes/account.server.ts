// The /account page: profile, linked sign-in methods, and where the user is signed in.
import { data, redirect } from "react-router";
import { accountNoticeAt, noticeSectionOf } from "~/components/account-sections";
import { z } from "zod";
import { db } from "~/db/client.server";
import { eventSource, mfaRequiredFor, notifySecurityChange, recentEvents, recordEvent, secondFactorSetupPending, updateSessionData } from "~/auth/accounts";
import {
  BadRequestError,
  endSession,
  ensureCsrfToken,
  headersWith,
  isRecentAuth,
  signedOutHeaders,
  toRelative,
  validateCallbackUrl,
  listSessions,
  readBody,
  reauthUrl,
  reissueSession,
  requireSession,
  revokeSession,
  revokeUserSessions,
  verifyCsrf,
} from "~/auth/core";
import { emailChangeAvailable } from "~/auth/email";
import { findProvider, methodLabel } from "~/auth/signin";
import { isOrganizationSignIn, organizationSignInNames } from "~/auth/organizations/sign-in-names.server";
import { ORGANIZATION_METHOD_TYPE } from "~/components/sign-in-method";
import { appsWithAccess, revokeAppAccess } from "~/auth/provider";
import { changeEmailIntent } from "./account-email-intent.server";
import { linkedAccountsData, unlinkAccountIntent } from "./account-links.server";
import { passkeyIntent, passkeysData } from "./account-passkeys.server";
import { isTwoFactorIntent, twoFactorIntent } from "./account-two-factor.server";
import { sessionSignInKind, twoFactorStatus } from "~/auth/two-factor";
import { idField } from "~/auth/core/ids";
import { isPasswordIntent, passwordMinimumLength } from "~/auth/passwords";
import { passwordIntentResponse } from "./account-password.server";
import { t } from "~/i18n/t.server";
import { nameRefusalMessage } from "~/auth/core/messages.server";
import { recentAuthRefusal } from "./account-reauth.server";
import { answersInPlace, nameRefusedRedirect, refusalFromQuery } from "./account-refusal.server";
import { accountDeleteIntent, accountExportRefusal, confirmationWord } from "./account-lifecycle.server";

export async function accountPageData(request: Request) {
  const { ar, session, setCookies } = await requireSession(request);
  const csrf = ensureCsrfToken(ar);
  const user = await db().user.findUnique({
    where: { id: session.userId },
    select: {
      name: true,
      email: true,
      emailVerified: true,
      image: true,
      createdAt: true,
      accounts: { select: { provider: true, type: true, createdAt: true }, orderBy: { createdAt: "asc" } },
      password: { select: { updatedAt: true } },
    },
  });
  if (!user) {
    // The user was deleted while a stateless cookie still names them: end that session.
    const ended = await endSession(ar);
    throw redirect("/", { headers: signedOutHeaders(ended.setCookies) });
  }
  const strategy = ar.config.sessionStrategy;
  const [sessions, events, twoFactor, secondFactorSetup, apps] = await Promise.all([
    listSessions(session.userId, session.sessionId),
    recentEvents(session.userId),
    twoFactorStatus(session.userId),
    // AUTH_REQUIRE_MFA and no second factor yet: the page shows only its set-up (ADR 082).
    // An organization's requireMfa means the same for its people (ADR 166).
    mfaRequiredFor(ar.config, session.userId, session.sessionId).then((required) => secondFactorSetupPending(required, session.userId)),
    // The apps allowed through Vestibule's OAuth provider, while it is on (docs/features/provider.md).
    ar.config.provider ? appsWithAccess(session.userId) : Promise.resolve(null),
  ]);
  const methodName = (id: string | null) => methodLabel(ar.config, id);
  // A sign-in through an organization's connection is named by the organization (ADR 167).
  const orgNames = await organizationSignInNames([...sessions.map((s) => s.credentialRef), ...events.map((e) => e.credentialRef)]);
  const orgName = (ref: string | null) => (ref ? (orgNames.get(ref) ?? "") : "");
  // The provider's kind too, so the page can say "Signed in with a password" in the visitor's words.
  const methodType = (id: string | null) => (id ? (findProvider(ar.config, id)?.type ?? "oauth") : null);
  // Past the recent sign-in window the page says so up front, rather than offer forms it would refuse (ADR 058).
  const recent = await isRecentAuth(ar, session);
  const updated = ar.url.searchParams.get("updated");
  // A sign-in finished by a recovery code lands here (ADR 074): how many are left, new ones
  // offered, and a link on to where the sign-in was going.
  const onward = updated === "recovery-code-used" ? validateCallbackUrl(ar.url.searchParams.get("callbackUrl"), ar.origin) : null;
  const recoveryCodeUsed =
    updated === "recovery-code-used" && twoFactor.enabled ? { left: twoFactor.recoveryCodesLeft, continueTo: onward ? toRelative(onward) : null } : null;
  // A refused form's words, named by the address a browser was sent back to (account-refusal.server.ts).
  const refusal = await refusalFromQuery(ar, { id: session.userId, email: user.email, name: user.name }, {
    passwordFloor: passwordMinimumLength({ secondFactor: twoFactor.enabled }, ar.config),
    deleteWord: confirmationWord(),
  });
  const page = {
    csrfToken: csrf.token,
    refusal,
    strategy,
    secondFactorSetup,
    profile: {
      name: user.name,
      email: user.email,
      emailVerified: user.emailVerified?.toISOString() ?? null,
      image: user.image,
      memberSince: user.createdAt.toISOString(),
    },
    hasPassword: user.password !== null,
    // The floor for a password chosen now: 8 while the second factor is on (ADR 075).
    passwordMinLength: passwordMinimumLength({ secondFactor: twoFactor.enabled }, ar.config),
    emailChange: { available: emailChangeAvailable(ar) },
    twoFactor,
    ways: await linkedAccountsData(ar, session.userId),
    passkeys: await passkeysData(ar, session.userId, recent),
    recentAuth: { recent, url: reauthUrl(ar, "/account") },
    accounts: user.accounts.map((a) => ({
      provider: a.provider,
      name: findProvider(ar.config, a.provider)?.name ?? a.provider,
      type: a.type,
      linkedAt: a.createdAt.toISOString(),
    })),
    sessions: sessions.map((s) => ({
      id: s.id,
      current: s.current,
      userAgent: s.userAgent,
      method: isOrganizationSignIn(s.method) ? orgName(s.credentialRef) : methodName(s.method),
      methodType: isOrganizationSignIn(s.method) ? ORGANIZATION_METHOD_TYPE : s.method ? sessionSignInKind(methodType(s.method)!, s.factors) : null,
      factors: s.factors,
      createdAt: s.createdAt.toISOString(),
      lastUsedAt: s.lastUsedAt.toISOString(),
    })),
    apps,
    events: events.map((e) => ({
      id: e.id,
      type: e.type,
      at: e.at.toISOString(),
      ip: e.ip,
      userAgent: e.userAgent,
      method: isOrganizationSignIn(e.provider) ? orgName(e.credentialRef) : methodName(e.provider),
      methodType: isOrganizationSignIn(e.provider) ? ORGANIZATION_METHOD_TYPE : e.provider ? sessionSignInKind(methodType(e.provider)!, e.factors) : null,
    })),
    recoveryCodeUsed,
    // The word the deletion form asks for, in this page's language (ADR 086).
    deleteWord: confirmationWord(),
    // A change made by a section's form is reported just above that section; others at the top.
    noticeSection: noticeSectionOf(updated),
    notice:
      updated === "profile"
        ? t("account.noticeProfile")
        : updated === "session"
          ? t("account.noticeSession")
          : updated === "others"
            ? t("account.noticeOthers")
          : updated === "email"
            ? t("account.noticeEmail")
          : updated === "two-factor-off"
            ? t("account.noticeTwoFactorOff")
          : updated === "link-taken"
            ? t("account.noticeLinkTaken")
          : updated === "app-revoked"
            ? t("account.noticeAppRevoked")
            : updated && Object.hasOwn(PASSWORD_NOTICES, updated)
              ? t(PASSWORD_NOTICES[updated as keyof typeof PASSWORD_NOTICES])
              : null,
  };
  // AUTH_REQUIRE_MFA and no second factor yet: the page shows only the set-up, and its data —
  // the HTML's hydration data and React Router's `/account.data` alike — carries nothing else
  // (ADR 082, 104): the same shape, emptied.
  return { data: secondFactorSetup ? setupOnly(page) : page, headers: headersWith([csrf.setCookie, ...setCookies]) };
}

/** The page's data for a user held at the second-factor set-up: the set-up's own parts, the rest emptied. */
function setupOnly<T extends AccountData>(full: T): T {
  return {
    ...full,
    profile: { name: null, email: null, emailVerified: null, image: null, memberSince: "" },
    hasPassword: false,
    emailChange: { available: false },
    ways: { ...full.ways, password: false, emailLink: false, linked: [], linkable: [], notice: null },
    accounts: [],
    sessions: [],
    events: [],
    apps: null,
  };
}

type AccountData = {
  profile: { name: string | null; email: string | null; emailVerified: string | null; image: string | null; memberSince: string };
  hasPassword: boolean;
  emailChange: { available: boolean };
  ways: Awaited<ReturnType<typeof linkedAccountsData>>;
  accounts: unknown[];
  sessions: unknown[];
  events: unknown[];
  apps: unknown[] | null;
};

const PASSWORD_NOTICES = {
  "password-set": "password.noticeSet",
  "password-changed": "password.noticeChanged",
  "password-removed": "password.noticeRemoved",
  "password-reset": "password.noticeReset",
} as const;


const Intent = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("update-profile"), name: z.string() }),
  z.object({ intent: z.literal("revoke-session"), sessionId: idField() }),
  z.object({ intent: z.literal("revoke-others") }),
  z.object({ intent: z.literal("revoke-all") }),
  z.object({ intent: z.literal("revoke-app"), clientId: z.string().min(1).max(2048) }),
]);

export async function accountAction(request: Request) {
  // No roll here: the redirects below do not carry this read's cookies; the page's loader rolls.
  const { ar, session } = await requireSession(request, { roll: false });
  let body;
  try {
    body = await readBody(request);
  } catch (error) {
    // The page's own refusal, with the status every refused body gets (400, 413, 415; core/body.server.ts).
    const status = error instanceof BadRequestError ? error.status : 400;
    const formError = status === 413 ? t("boundary.tooLarge.message") : status === 415 ? t("boundary.unsupported.message") : t("common.unknownRequest");
    return data({ formError, fieldErrors: {} }, { status });
  }
  if (!verifyCsrf(ar, body.csrfToken)) {
    return data({ formError: t("common.formExpired"), fieldErrors: {} }, { status: 403 });
  }
  // Changing how the account is protected needs a recent sign-in (ADR 058): a copied cookie is not enough.
  const refused = await recentAuthRefusal(ar, session, body);
  if (refused) return refused;
  // Add or change the e-mail address: a link to the new address (app/auth/email/change.server.ts).
  if (body.intent === "change-email") return changeEmailIntent(ar, session.userId, body);
  // Remove a linked provider account (app/routes/account-links.server.ts).
  if (body.intent === "unlink-account") return unlinkAccountIntent(ar, session, body);
  // Rename or remove a passkey (app/routes/account-passkeys.server.ts).
  if (body.intent === "passkey-rename" || body.intent === "passkey-remove") return passkeyIntent(ar, session, body);
  // The second factor (app/routes/account-two-factor.server.ts).
  if (isTwoFactorIntent(body.intent)) return twoFactorIntent(ar, session, body.intent, body);
  // Delete my account (app/routes/account-lifecycle.server.ts; the download is answered by its middleware).
  if (body.intent === "account-delete") return accountDeleteIntent(ar, session, body);
  if (body.intent === "account-export") return accountExportRefusal(request);
  // Set, change or remove the password (app/routes/account-password.server.ts).
  if (isPasswordIntent(body.intent)) return passwordIntentResponse(ar, session, body.intent, body);
  const parsed = Intent.safeParse(body);
  if (!parsed.success) return data({ formError: t("common.unknownRequest"), fieldErrors: {} }, { status: 400 });
  const input = parsed.data;

  if (input.intent === "update-profile") {
    const result = await updateSessionData(request, { name: input.name });
    if ("error" in result) {
      // A browser is sent back to the page, which names the reason (account-refusal.server.ts).
      if (result.refusal && !answersInPlace(ar, body)) throw nameRefusedRedirect(result.refusal);
      // The one name rule's reason, in the page's language (the JSON endpoint keeps its English).
      const message = result.refusal ? nameRefusalMessage(result.refusal, "account.nameEmpty") : t("common.unknownRequest");
      return data({ formError: null, fieldErrors: { [result.field || "name"]: message } }, { status: 400 });
    }
    throw redirect(accountNoticeAt("profile"), { headers: headersWith(result.setCookies) });
  }

  if (input.intent === "revoke-session") {
    const removed = await revokeSession(session.userId, input.sessionId);
    if (!removed) return data({ formError: t("account.sessionGone"), fieldErrors: {} }, { status: 404 });
    await recordEvent("session-revoked", { userId: session.userId, ...eventSource(ar), detail: { scope: "one" } });
    if (input.sessionId !== session.sessionId) await notifySecurityChange(ar, session.userId, { kind: "sessions-ended", scope: "one" });
    if (input.sessionId === session.sessionId) {
      const ended = await endSession(ar);
      throw redirect("/", { headers: signedOutHeaders(ended.setCookies) });
    }
    throw redirect(accountNoticeAt("session"));
  }

  if (input.intent === "revoke-app") {
    // An app's access through Vestibule's provider: its grants and refresh tokens end.
    if (!ar.config.provider || !(await revokeAppAccess(ar, session.userId, input.clientId))) {
      return data({ formError: t("apps.gone"), fieldErrors: {} }, { status: 404 });
    }
    throw redirect("/account?updated=app-revoked");
  }

  if (input.intent === "revoke-others") {
    const count = await revokeUserSessions(session.userId, { except: session.sessionId });
    await recordEvent("session-revoked", { userId: session.userId, ...eventSource(ar), detail: { scope: "others", count } });
    await notifySecurityChange(ar, session.userId, { kind: "sessions-ended", scope: "others" });
    // This device's jwt cookie is issued again after the cut-off the revocation wrote.
    throw redirect(accountNoticeAt("others"), { headers: headersWith(await reissueSession(ar)) });
  }

  // revoke-all: every session of the user, of both strategies, this one included.
  const count = await revokeUserSessions(session.userId);
  await recordEvent("session-revoked", { userId: session.userId, ...eventSource(ar), detail: { scope: "all", count } });
  await notifySecurityChange(ar, session.userId, { kind: "sessions-ended", scope: "all" });
  const ended = await endSession(ar);
  throw redirect(`${ar.config.basePath}/signin?notice=SignedOutEverywhere`, { headers: signedOutHeaders(ended.setCookies) });
}
