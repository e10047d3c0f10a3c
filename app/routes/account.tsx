import { useEffect, useRef } from "react";
import { data, Form, useLocation, useNavigation } from "react-router";
import { ACCOUNT_SECTION, noticeAnchor, type AccountSection, ACCOUNT_FORM_ACTION } from "~/components/account-sections";
import { CsrfField, Field } from "~/components/auth-forms";
import { EmailChangeSection } from "~/components/email-change-section";
import { ActivitySection } from "~/components/activity-section";
import { LinkedAccountsSection } from "~/components/linked-accounts-section";
import { PasskeysSection } from "~/components/passkeys-section";
import { PasswordSection, type PasswordSectionError } from "~/components/password-section";
import { SessionsSection } from "~/components/sessions-section";
import { AppsSection } from "~/components/apps-section";
import { TwoFactorSection } from "~/components/two-factor-section";
import { LocalTime } from "~/components/local-time";
import { Ltr } from "~/components/ltr";
import { useT } from "~/i18n/react";
import { PageTitle } from "~/components/site-name";
import type { Route } from "./+types/account";
import { accountAction, accountPageData } from "./account.server";
import { reauthJsonMiddleware } from "./account-reauth.server";
import { accountLifecycleMiddleware } from "./account-lifecycle.server";
import { accountNamesJsonMiddleware } from "./account-names-json.server";
import { AccountLifecycleSection } from "~/components/account-lifecycle-section";

export async function loader({ request }: Route.LoaderArgs) {
  const page = await accountPageData(request);
  return data(page.data, { headers: page.headers });
}

export const action = ({ request }: Route.ActionArgs) => accountAction(request);

// A JSON client's change refused for want of a recent sign-in gets the JSON itself (ADR 058).
// The download, and a JSON client's deletion, are answered before the page renders (ADR 086); so
// are a JSON client's name changes (ADR 108).
export const middleware: Route.MiddlewareFunction[] = [reauthJsonMiddleware, accountLifecycleMiddleware, accountNamesJsonMiddleware];

export function headers({ parentHeaders }: Route.HeadersArgs) {
  // The page shows the user's sessions and activity, and its answers to totp-start, totp-confirm
  // and recovery-codes show the TOTP secret and the recovery codes: no cache, shared or private,
  // may keep a copy (a shared computer's back button, a proxy).
  const headers = new Headers(parentHeaders);
  headers.set("Cache-Control", "private, no-store");
  return headers;
}

function passkeyRenameError(actionData: unknown): { passkeyId: string; message: string } | null {
  const errors = (actionData as { fieldErrors?: Record<string, unknown> } | undefined)?.fieldErrors;
  return errors && typeof errors.passkeyName === "string" ? { passkeyId: String(errors.passkeyId ?? ""), message: errors.passkeyName } : null;
}

/** The single-factor floor a refused totp-disable asks the new password to meet (ADR 084), or null. */
function passwordFirstMin(actionData: unknown): number | null {
  const first = (actionData as { passwordFirst?: { min?: unknown } } | undefined)?.passwordFirst;
  return typeof first?.min === "number" ? first.min : null;
}

/** The password forms' refusal, when the last submission was one of them. */
function passwordError(actionData: Route.ComponentProps["actionData"]): PasswordSectionError {
  if (!actionData || !("passwordIntent" in actionData)) return null;
  const [field, message] = Object.entries(actionData.fieldErrors ?? {})[0] ?? [];
  if (field !== "password" && field !== "currentPassword") return null;
  return { intent: actionData.passwordIntent, field, message: String(message) };
}

/** The page's refusal shaped as the form's answer: its field and words, and which form it answers. */
function refusedAnswer(refusal: { field: string; message: string; intent: string; totpSetup: unknown }): Route.ComponentProps["actionData"] {
  const intent = refusal.intent.startsWith("password-") ? { passwordIntent: refusal.intent } : refusal.intent.startsWith("totp-") || refusal.intent === "recovery-codes" ? { twoFactorIntent: refusal.intent, totpSetup: refusal.totpSetup } : {};
  return { formError: null, fieldErrors: { [refusal.field]: refusal.message }, ...intent } as unknown as Route.ComponentProps["actionData"];
}

/** A section's notice, just above its card: where `#<section>-notice` lands. */
function SectionNotice({ section, notice }: { section: AccountSection; notice: { section: AccountSection | null; text: string | null; refused?: boolean } }) {
  const id = noticeAnchor(section);
  const shown = Boolean(notice.text) && notice.section === section;
  const { hash, key } = useLocation();
  const element = useRef<HTMLParagraphElement>(null);
  // Without JavaScript the browser focuses the fragment's focusable target as it scrolls to it;
  // React Router only scrolls, so with JavaScript the notice the address names is focused here —
  // read out, and the place the keyboard goes on from (ADR 114).
  useEffect(() => {
    if (shown && hash === `#${id}`) element.current?.focus();
  }, [shown, hash, id, key]);
  if (!shown) return null;
  return (
    <p className={notice.refused ? "alert" : "notice"} role={notice.refused ? "alert" : "status"} id={id} tabIndex={-1} ref={element}>
      {notice.text}
    </p>
  );
}

export default function Account({ loaderData, actionData: answered }: Route.ComponentProps) {
  // A refusal the address names (a browser sent back after a refused form) marks its field as the
  // form's own answer did; the section's notice above says it and takes the focus.
  const actionData = answered ?? (loaderData.refusal ? refusedAnswer(loaderData.refusal) : undefined);
  const { refusal, csrfToken, profile, sessions, apps, events, notice, noticeSection, recoveryCodeUsed, emailChange, ways, passkeys, twoFactor, hasPassword, passwordMinLength, recentAuth, deleteWord, secondFactorSetup } = loaderData;
  const t = useT();
  const navigation = useNavigation();
  // A refusal the address names (a browser sent back after a refused form) is said in its section.
  const shownNotice = refusal ? { section: refusal.section, text: refusal.message, refused: true } : { section: noticeSection, text: notice };
  const busy = (intent: string) => navigation.state !== "idle" && navigation.formData?.get("intent") === intent;
  const nameError = actionData?.fieldErrors && "name" in actionData.fieldErrors ? String(actionData.fieldErrors.name) : null;

  return (
    <main>
      <PageTitle page={t("account.title")} />
      <h1>{t("account.title")}</h1>
      {notice && !noticeSection ? (
        <p className="notice" role="status">
          {notice}
        </p>
      ) : null}
      {recoveryCodeUsed ? (
        <div className="notice" role="status" id="recovery-code-used">
          <p>
            {t("recoveryUsed.intro")} {t("recoveryUsed.left", { n: recoveryCodeUsed.left })}{" "}
            <a href="#recovery-codes-code-form">{t("recoveryUsed.getNew")}</a>
          </p>
          {recoveryCodeUsed.continueTo ? (
            <p>
              <a href={recoveryCodeUsed.continueTo}>{t("recoveryUsed.continue")}</a>
            </p>
          ) : null}
        </div>
      ) : null}
      {actionData?.formError ? (
        <p className="alert" role="alert">
          {actionData.formError}
          {"reauthUrl" in actionData && actionData.reauthUrl ? (
            <>
              {" "}
              <a href={String(actionData.reauthUrl)}>{t("reauth.button")}</a>
            </>
          ) : null}
        </p>
      ) : null}
      {/* The standing hint, unless a refusal above already says to sign in again (one notice, one link). */}
      {recentAuth.recent || (actionData && "reauthUrl" in actionData && actionData.reauthUrl) ? null : (
        <p className="notice" id="reauth-hint">
          {t.rich("reauth.hint", { link: (c) => <a href={recentAuth.url}>{c}</a> })}
        </p>
      )}

      {secondFactorSetup ? (
        <div className="alert" role="alert" id="second-factor-required">
          <h2>{t("mfaSetup.heading")}</h2>
          <p>{t("mfaSetup.required")}</p>
        </div>
      ) : null}
      {secondFactorSetup ? null : (
        <>
          <SectionNotice section={ACCOUNT_SECTION.profile} notice={shownNotice} />
          <section className="card" aria-labelledby="profile-heading" id={ACCOUNT_SECTION.profile}>
            <h2 id="profile-heading">{t("account.profile")}</h2>
            <dl className="profile">
              <dt>{t("account.email")}</dt>
              <dd id="profile-email">
                {profile.email ? <Ltr>{profile.email}</Ltr> : t("account.emailNone")} {profile.email ? (profile.emailVerified ? t("account.verified") : t("account.notVerified")) : null}
              </dd>
              <dt>{t("account.name")}</dt>
              {/* A name reads in its own direction inside a page of the other (<bdi>: "Ada L." in Arabic). */}
              <dd id="profile-name">{profile.name ? <bdi>{profile.name}</bdi> : t("account.nameNotSet")}</dd>
              <dt>{t("account.memberSince")}</dt>
              <dd>
                <LocalTime value={profile.memberSince} />
              </dd>
            </dl>
            <Form method="post" action={ACCOUNT_FORM_ACTION} id="profile-form">
              <CsrfField token={csrfToken} />
              <input type="hidden" name="intent" value="update-profile" />
              <Field id="profile-name-input" label={t("account.displayName")} name="name" type="text" defaultValue={profile.name ?? ""} required autoComplete="name" error={nameError} />
              <button type="submit" className="button inline" aria-disabled={busy("update-profile") || undefined}>
                {busy("update-profile") ? t("common.saving") : t("account.saveName")}
              </button>
            </Form>
          </section>

          <SectionNotice section={ACCOUNT_SECTION.email} notice={shownNotice} />
          <EmailChangeSection
            csrfToken={csrfToken}
            current={profile.email}
            verified={profile.emailVerified !== null}
            available={emailChange.available}
            sentTo={actionData && "emailSentTo" in actionData ? actionData.emailSentTo : null}
            error={actionData?.fieldErrors && "email" in actionData.fieldErrors ? String(actionData.fieldErrors.email) : null}
          />

          <LinkedAccountsSection csrfToken={csrfToken} {...ways} />

          {/* Turning the second factor off was refused for a short password: the change form asks for the single-factor floor (ADR 084). */}
          <SectionNotice section={ACCOUNT_SECTION.password} notice={shownNotice} />
          <PasswordSection
            csrfToken={csrfToken}
            hasPassword={hasPassword}
            minLength={passwordFirstMin(actionData) ?? passwordMinLength}
            error={passwordError(actionData)}
          />
        </>
      )}

      <PasskeysSection csrfToken={csrfToken} {...passkeys} renameError={passkeyRenameError(actionData)} />

      <SectionNotice section={ACCOUNT_SECTION.twoFactor} notice={shownNotice} />
      <TwoFactorSection
        csrfToken={csrfToken}
        {...twoFactor}
        setup={actionData && "totpSetup" in actionData ? actionData.totpSetup : (refusal?.totpSetup ?? null)}
        recoveryCodes={actionData && "recoveryCodes" in actionData ? actionData.recoveryCodes : null}
        intent={actionData && "twoFactorIntent" in actionData ? actionData.twoFactorIntent : (refusal?.intent ?? null)}
        codeError={actionData?.fieldErrors && "code" in actionData.fieldErrors ? String(actionData.fieldErrors.code) : null}
      />

      {secondFactorSetup ? null : (
        <>
          <SectionNotice section={ACCOUNT_SECTION.sessions} notice={shownNotice} />
          <SessionsSection csrfToken={csrfToken} sessions={sessions} />
          {apps ? <AppsSection csrfToken={csrfToken} apps={apps} /> : null}
          <ActivitySection events={events} />
          <SectionNotice section={ACCOUNT_SECTION.deleteAccount} notice={shownNotice} />
          <AccountLifecycleSection
            csrfToken={csrfToken}
            deleteWord={deleteWord}
            confirmError={actionData?.fieldErrors && "confirm" in actionData.fieldErrors ? String(actionData.fieldErrors.confirm) : null}
          />
        </>
      )}
    </main>
  );
}
