import { data } from "react-router";
import { AuthCard, CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { Ltr } from "~/components/ltr";
import { PasskeyReauth } from "~/components/passkey-reauth";
import { headersWith, jsonRedirectMiddleware } from "~/auth/core";
import { reauthAction, reauthJsonAction, reauthPageData, type ReauthPageOutcome } from "~/auth/signin";
import { useT } from "~/i18n/react";
import type { Route } from "./+types/reauth";

// The re-authentication page (ADR 080): document forms POSTing back here;
// app/auth/signin/reauth-page.server.ts decides. JSON-mode clients get `{url}` before rendering.
export const middleware: Route.MiddlewareFunction[] = [jsonRedirectMiddleware(reauthJsonAction)];

export const meta: Route.MetaFunction = () => [{ name: "robots", content: "noindex" }];

/** The page, or a thrown Response: redirects go on, a refused body (413, 415) reaches the error boundary. */
function answer(outcome: ReauthPageOutcome) {
  if (outcome.type === "response") throw outcome.response;
  const headers = headersWith(outcome.setCookies);
  if (outcome.retryAfterSeconds) headers.set("Retry-After", String(outcome.retryAfterSeconds));
  return data(outcome.page, { status: outcome.status, headers });
}

export const loader = async ({ request }: Route.LoaderArgs) => answer(await reauthPageData(request));

export const action = async ({ request }: Route.ActionArgs) => answer(await reauthAction(request));

export function headers({ parentHeaders }: Route.HeadersArgs) {
  const headers = new Headers(parentHeaders);
  headers.set("Cache-Control", "private, no-store");
  return headers;
}

export default function Reauth({ loaderData, actionData }: Route.ComponentProps) {
  const t = useT();
  const { csrfToken, callbackUrl, action, email, methods, step, error } = actionData ?? loaderData;
  const hidden = (
    <>
      <CsrfField token={csrfToken} />
      <input type="hidden" name="callbackUrl" value={callbackUrl} />
    </>
  );
  const sections: React.ReactNode[] = [];

  if (step === "code" && methods.email) {
    sections.push(
      <div key="code" className="stack">
        <p id="reauth-code-help">{t.rich("reauth.codeSent", { address: <Ltr>{email ?? ""}</Ltr> })}</p>
        <DocumentForm action={action} label={t("reauth.confirmCode")} pendingLabel={t("common.checking")} id="reauth-code-form">
          {hidden}
          <input type="hidden" name="provider" value={methods.email} />
          <input type="hidden" name="step" value="code" />
          <Field
            id="reauth-code-input"
            label={t("emailCode.label")}
            name="code"
            type="text"
            inputMode="numeric"
            autoComplete="one-time-code"
            maxLength={12}
            required
            autoFocus
            aria-describedby="reauth-code-help"
            error={error}
          />
        </DocumentForm>
        <DocumentForm action={action} label={t("reauth.sendAgain")} pendingLabel={t("common.sending")} id="reauth-send-again-form" className="secondary">
          {hidden}
          <input type="hidden" name="provider" value={methods.email} />
          <input type="hidden" name="step" value="send" />
        </DocumentForm>
      </div>,
    );
  } else {
    if (methods.password) {
      sections.push(
        <DocumentForm key="password" action={action} label={t("reauth.withPassword")} pendingLabel={t("common.checking")} id="reauth-password-form">
          {hidden}
          <input type="hidden" name="provider" value={methods.password} />
          <Field id="reauth-password" label={t("reauth.passwordLabel")} type="password" name="password" autoComplete="current-password" required autoFocus />
        </DocumentForm>,
      );
    }
    if (methods.passkey) {
      sections.push(<PasskeyReauth key="passkey" csrfToken={csrfToken} callbackUrl={callbackUrl} action={action} providerId={methods.passkey} />);
    }
    if (methods.providers.length) {
      sections.push(
        <div key="oidc" className="stack">
          {methods.providers.map((p) => (
            <DocumentForm key={p.id} action={action} label={t("reauth.withProvider", { name: p.name })} pendingLabel={t("reauth.redirecting", { name: p.name })}>
              {hidden}
              <input type="hidden" name="provider" value={p.id} />
            </DocumentForm>
          ))}
        </div>,
      );
    }
    if (methods.email) {
      sections.push(
        <DocumentForm key="email" action={action} label={t("reauth.sendCode")} pendingLabel={t("common.sending")} id="reauth-email-form">
          {hidden}
          <input type="hidden" name="provider" value={methods.email} />
          <input type="hidden" name="step" value="send" />
          <p className="muted">{t.rich("reauth.emailIntro", { address: <Ltr>{email ?? ""}</Ltr> })}</p>
        </DocumentForm>,
      );
    }
  }

  return (
    <AuthCard title={t("reauth.title")}>
      <p>{t("reauth.intro")}</p>
      {error && step !== "code" ? (
        <p className="alert" role="alert" id="reauth-error">
          {error}
        </p>
      ) : null}
      {sections.length === 0 ? <p>{t("reauth.noFactor")}</p> : null}
      {sections.flatMap((s, i) => (i === 0 ? [s] : [<p key={`or-${i}`} className="divider">{t("signin.or")}</p>, s]))}
      <p>
        <a href={callbackUrl}>{t("reauth.cancel")}</a>
      </p>
    </AuthCard>
  );
}
