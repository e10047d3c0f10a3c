import { data } from "react-router";
import { AuthCard, CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { PasskeySignIn } from "~/components/passkey-signin";
import { jsonRedirectMiddleware } from "~/auth/core";
import { signinPageData, signinRootAction } from "~/auth/signin";
import { useT } from "~/i18n/react";
import type { Route } from "./+types/signin";

export const middleware: Route.MiddlewareFunction[] = [jsonRedirectMiddleware(signinRootAction)];

export async function loader({ request }: Route.LoaderArgs) {
  const page = await signinPageData(request);
  return data(page.data, { headers: page.headers });
}

export const action = ({ request }: Route.ActionArgs) => signinRootAction(request);

const EMAIL_ERRORS = new Set(["EmailSignin", "EmailInvalid", "RateLimited"]);
// What to do next, after the contract's text, for the e-mail form's own codes. RateLimited needs
// none: its text already says how long to wait.
const EMAIL_HINTS = { EmailInvalid: "error.EmailInvalidHint" } as const;

export default function SignIn({ loaderData }: Route.ComponentProps) {
  const t = useT();
  const { csrfToken, callbackUrl, providers, error, email, signedInAs, passwordPages } = loaderData;
  const oauth = providers.filter((p) => p.type === "oauth" || p.type === "oidc");
  const emailProvider = providers.find((p) => p.type === "email");
  const credentials = providers.find((p) => p.type === "credentials");
  const passkey = providers.find((p) => p.type === "webauthn");
  // The browser's autofill offers passkeys on the field marked "webauthn" (conditional UI).
  const webauthnHint = passkey ? " webauthn" : "";
  // Tie the message to the fields it is about; other errors stand above all forms.
  const credentialsError = error?.code === "CredentialsSignin" ? error.message : null;
  const emailError =
    error && emailProvider && EMAIL_ERRORS.has(error.code) ? [error.message, error.code in EMAIL_HINTS ? t(EMAIL_HINTS[error.code as keyof typeof EMAIL_HINTS]) : null].filter(Boolean).join(" ") : null;
  const generalError = error && !credentialsError && !emailError ? error.message : null;
  const sections: React.ReactNode[] = [];

  if (passkey) sections.push(<PasskeySignIn key="passkey" csrfToken={csrfToken} callbackUrl={callbackUrl} />);
  if (oauth.length) {
    sections.push(
      <div key="oauth" className="stack">
        {oauth.map((p) => (
          <DocumentForm key={p.id} action={p.signinUrl} label={t("signin.withProvider", { name: p.name })} pendingLabel={t("signin.redirectingTo", { name: p.name })}>
            <CsrfField token={csrfToken} />
            <input type="hidden" name="callbackUrl" value={callbackUrl} />
          </DocumentForm>
        ))}
      </div>,
    );
  }
  if (emailProvider) {
    sections.push(
      <DocumentForm key="email" action={emailProvider.signinUrl} label={t("signin.sendLink")} pendingLabel={t("common.sending")} id="email-form">
        <CsrfField token={csrfToken} />
        <input type="hidden" name="callbackUrl" value={callbackUrl} />
        <Field
          id={`input-email-for-${emailProvider.id}-provider`}
          label={t("signin.emailLabel")}
          type="email"
          name="email"
          autoComplete={credentials ? "email" : `email${webauthnHint}`}
          placeholder={t("signin.emailPlaceholder")}
          defaultValue={email}
          required
          error={emailError}
        />
      </DocumentForm>,
    );
  }
  if (credentials) {
    sections.push(
      <DocumentForm key="credentials" action={credentials.callbackUrl} label={t("signin.withPassword")} pendingLabel={t("common.signingIn")} id="credentials-form">
        <CsrfField token={csrfToken} />
        <input type="hidden" name="callbackUrl" value={callbackUrl} />
        {credentialsError ? (
          <p className="alert" role="alert" id="credentials-error">
            {credentialsError}
          </p>
        ) : null}
        <Field
          id="input-email-for-credentials-provider"
          label={t("signin.emailLabel")}
          type="email"
          name="email"
          autoComplete={`username${webauthnHint}`}
          defaultValue={email}
          required
          autoFocus={Boolean(credentialsError)}
          aria-describedby={credentialsError ? "credentials-error" : undefined}
          aria-invalid={credentialsError ? true : undefined}
        />
        <Field
          id="input-password-for-credentials-provider"
          label={t("signin.passwordLabel")}
          type="password"
          name="password"
          autoComplete="current-password"
          required
          aria-describedby={credentialsError ? "credentials-error" : undefined}
          aria-invalid={credentialsError ? true : undefined}
        />
        {passwordPages.forgotPassword ? (
          <p className="muted">
            <a href="/auth/forgot-password" id="forgot-password-link">
              {t("signin.forgotPassword")}
            </a>
          </p>
        ) : null}
      </DocumentForm>,
    );
  }

  return (
    <AuthCard title={t("signin.title")}>
      {signedInAs ? (
        <p className="notice">
          {t("signin.signedInAs", { address: signedInAs })} <a href={callbackUrl}>{t("common.continue")}</a>
        </p>
      ) : null}
      {generalError ? (
        <p className="alert" role="alert">
          {generalError}
        </p>
      ) : null}
      {sections.length === 0 ? <p>{t("signin.noMethod")}</p> : null}
      {sections.flatMap((s, i) => (i === 0 ? [s] : [<p key={`or-${i}`} className="divider">{t("signin.or")}</p>, s]))}
      {passwordPages.signup ? (
        <p>
          {t("signin.noAccount")}{" "}
          <a href={`/auth/signup?${new URLSearchParams({ callbackUrl })}`} id="signup-link">
            {t("signin.createOne")}
          </a>
        </p>
      ) : null}
    </AuthCard>
  );
}
