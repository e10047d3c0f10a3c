import { Form, useNavigation } from "react-router";
import { CsrfField, Field } from "./auth-forms";

export type PasswordSectionError = {
  intent: string;
  field: "password" | "currentPassword";
  message: string;
} | null;

/**
 * /account: set a password (no password yet), or change or remove it (contract section 15). The
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
  const navigation = useNavigation();
  const busy = (intent: string) => navigation.state !== "idle" && navigation.formData?.get("intent") === intent;
  const errorFor = (intent: string, field: string) => {
    if (!error || error.intent !== intent || error.field !== field) return null;
    return error.message;
  };
  const hint = `At least ${minLength} characters. Long phrases of unrelated words are good; common passwords are refused.`;
  return (
    <section className="card" aria-labelledby="password-heading">
      <h2 id="password-heading">Password</h2>
      {!hasPassword ? (
        <Form method="post" id="password-set-form">
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="password-set" />
          <p className="muted">You can sign in without a password. Set one to also sign in with your e-mail address and a password.</p>
          <Field id="password-set-input" label="New password" name="password" type="password" autoComplete="new-password" required minLength={minLength} error={errorFor("password-set", "password")} />
          <p className="muted">{hint}</p>
          <button type="submit" className="button inline" aria-disabled={busy("password-set") || undefined}>
            {busy("password-set") ? "Saving…" : "Set password"}
          </button>
        </Form>
      ) : (
        <>
          <Form method="post" id="password-change-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="intent" value="password-change" />
            <h3>Change your password</h3>
            <Field id="password-change-current" label="Current password" name="currentPassword" type="password" autoComplete="current-password" required error={errorFor("password-change", "currentPassword")} />
            <Field id="password-change-new" label="New password" name="password" type="password" autoComplete="new-password" required minLength={minLength} error={errorFor("password-change", "password")} />
            <p className="muted">{hint} Every other device is signed out.</p>
            <button type="submit" className="button inline" aria-disabled={busy("password-change") || undefined}>
              {busy("password-change") ? "Saving…" : "Change password"}
            </button>
          </Form>
          <Form method="post" id="password-remove-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="intent" value="password-remove" />
            <h3>Remove your password</h3>
            <Field id="password-remove-current" label="Current password" name="currentPassword" type="password" autoComplete="current-password" required error={errorFor("password-remove", "currentPassword")} />
            <button type="submit" className="button inline danger" aria-disabled={busy("password-remove") || undefined}>
              {busy("password-remove") ? "Removing…" : "Remove password"}
            </button>
          </Form>
        </>
      )}
    </section>
  );
}
