import type { ReactNode } from "react";
import { CsrfField, DocumentForm, Field } from "./auth-forms";

export type CodeFormProps = {
  action: string;
  csrfToken: string;
  callbackUrl: string | null;
  withPassword: boolean;
  minLength: number;
};

/**
 * The form for an e-mailed code, shown only in the browser that asked (contract section 15): the
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
  return (
    <DocumentForm action={form.action} label={form.withPassword ? "Set new password" : "Continue"} pendingLabel="Checking…" id="email-code-form">
      <CsrfField token={form.csrfToken} />
      {form.callbackUrl ? <input type="hidden" name="callbackUrl" value={form.callbackUrl} /> : null}
      <Field
        id="email-code-input"
        label="Code from the e-mail"
        name="code"
        type="text"
        inputMode="numeric"
        autoComplete="one-time-code"
        pattern="[0-9 ]*"
        maxLength={12}
        required
        error={codeError}
      />
      {form.withPassword ? (
        <Field
          id="email-code-password"
          label="New password"
          name="password"
          type="password"
          autoComplete="new-password"
          minLength={form.minLength}
          required
          error={passwordError}
        />
      ) : null}
    </DocumentForm>
  );
}
