import type { ReactNode } from "react";
import { useT } from "~/i18n/react";
import { CsrfField, DocumentForm, Field } from "./auth-forms";

export type CodeFormProps = {
  action: string;
  csrfToken: string;
  callbackUrl: string | null;
  withPassword: boolean;
  minLength: number;
};

/**
 * The form for an e-mailed code, shown only in the browser that asked: the
 * code alone (sign-in, sign-up), or the code and a new password (reset). Neither is ever echoed.
 */
export function EmailCodeForm({
  form,
  codeError,
  passwordError,
}: {
  form: CodeFormProps;
  codeError?: ReactNode;
  passwordError?: ReactNode;
}) {
  const t = useT();
  return (
    <DocumentForm action={form.action} label={form.withPassword ? t("emailCode.setPassword") : t("common.continue")} pendingLabel={t("common.checking")} id="email-code-form">
      <CsrfField token={form.csrfToken} />
      {form.callbackUrl ? <input type="hidden" name="callbackUrl" value={form.callbackUrl} /> : null}
      <Field
        id="email-code-input"
        label={t("emailCode.label")}
        name="code"
        type="text"
        inputMode="numeric"
        autoComplete="one-time-code"
        maxLength={12}
        required
        error={codeError}
      />
      {form.withPassword ? (
        <Field
          id="email-code-password"
          label={t("emailCode.newPassword")}
          name="password"
          type="password"
          autoComplete="new-password"
          minLength={form.minLength}
          required
          error={passwordError}
          // After a refused code the password typed beside it is not sent back (never echoed): say so at the field.
          {...(codeError && !passwordError ? { "aria-describedby": "email-code-password-cleared" } : {})}
        />
      ) : null}
      {form.withPassword && codeError && !passwordError ? (
        <p className="muted" id="email-code-password-cleared">
          {t("emailCode.passwordCleared")}
        </p>
      ) : null}
    </DocumentForm>
  );
}
