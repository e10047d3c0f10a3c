import { Form, useNavigation } from "react-router";
import { ACCOUNT_SECTION, ACCOUNT_FORM_ACTION } from "./account-sections";
import { CsrfField, Field } from "./auth-forms";
import { useT } from "~/i18n/react";

export type PasswordSectionError = {
  intent: string;
  field: "password" | "currentPassword";
  message: string;
} | null;

/**
 * /account: set a password (no password yet), or change or remove it. The
 * server decides every rule again; the page only shows the forms that apply.
 */
export function PasswordSection({
  csrfToken,
  hasPassword,
  minLength,
  error,
}: {
  csrfToken: string;
  hasPassword: boolean;
  minLength: number;
  error: PasswordSectionError;
}) {
  const t = useT();
  const navigation = useNavigation();
  const busy = (intent: string) => navigation.state !== "idle" && navigation.formData?.get("intent") === intent;
  const errorFor = (intent: string, field: string) => {
    if (!error || error.intent !== intent || error.field !== field) return null;
    return error.message;
  };
  const hint = t("password.hint", { min: minLength });
  return (
    <section className="card" aria-labelledby="password-heading" id={ACCOUNT_SECTION.password}>
      <h2 id="password-heading">{t("password.heading")}</h2>
      {!hasPassword ? (
        <Form method="post" action={ACCOUNT_FORM_ACTION} id="password-set-form">
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="password-set" />
          <p className="muted">{t("password.noneYet")}</p>
          <Field id="password-set-input" label={t("password.new")} name="password" type="password" autoComplete="new-password" required minLength={minLength} error={errorFor("password-set", "password")} />
          <p className="muted">{hint}</p>
          <button type="submit" className="button inline" aria-disabled={busy("password-set") || undefined}>
            {busy("password-set") ? t("common.saving") : t("password.set")}
          </button>
        </Form>
      ) : (
        <>
          <Form method="post" action={ACCOUNT_FORM_ACTION} id="password-change-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="intent" value="password-change" />
            <h3>{t("password.changeHeading")}</h3>
            <Field id="password-change-current" label={t("password.current")} name="currentPassword" type="password" autoComplete="current-password" required error={errorFor("password-change", "currentPassword")} />
            <Field id="password-change-new" label={t("password.new")} name="password" type="password" autoComplete="new-password" required minLength={minLength} error={errorFor("password-change", "password")} />
            <p className="muted">
              {hint} {t("password.othersSignedOut")}
            </p>
            <button type="submit" className="button inline" aria-disabled={busy("password-change") || undefined}>
              {busy("password-change") ? t("common.saving") : t("password.change")}
            </button>
          </Form>
          <Form method="post" action={ACCOUNT_FORM_ACTION} id="password-remove-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="intent" value="password-remove" />
            <h3>{t("password.removeHeading")}</h3>
            <Field id="password-remove-current" label={t("password.current")} name="currentPassword" type="password" autoComplete="current-password" required error={errorFor("password-remove", "currentPassword")} />
            <button type="submit" className="button inline danger" aria-disabled={busy("password-remove") || undefined}>
              {busy("password-remove") ? t("common.removing") : t("password.remove")}
            </button>
          </Form>
        </>
      )}
    </section>
  );
}
