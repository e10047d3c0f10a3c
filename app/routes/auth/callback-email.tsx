import { data, isRouteErrorResponse, useRouteError } from "react-router";
import { AuthCard, CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { Ltr } from "~/components/ltr";
import { EmailCodeForm, type CodeFormProps } from "~/components/email-code-form";
import { headersWith, jsonRedirectMiddleware } from "~/auth/core";
import { emailCallbackAction, emailCallbackJsonAction, emailCallbackLoader, type ChoosePasswordPage } from "~/auth/signin";
import type { Route } from "./+types/callback-email";
import { useT } from "~/i18n/react";

// The e-mail link's landing URL. A page route (it has a static segment, so it wins over
// auth/callback/:provider) because with AUTH_EMAIL_CONFIRM=true it shows a page; every other
// outcome is a redirect, passed on with its cookies. A JSON-mode client (the code form posted by
// an Auth.js client) gets its answer as it is, `{url}` or the refused code's 400, before rendering.
export const middleware: Route.MiddlewareFunction[] = [jsonRedirectMiddleware(emailCallbackJsonAction)];

// The <title> comes from AuthCard, so it always matches the heading.
export const meta: Route.MetaFunction = () => [{ name: "robots", content: "noindex" }];

/** Redirects pass through; anything else (a 400 for a disabled provider) becomes the error page. */
function passOn(response: Response): Response {
  if (response.status >= 300 && response.status < 400) return response;
  throw response;
}

export async function loader({ request }: Route.LoaderArgs) {
  const outcome = await emailCallbackLoader(request);
  if (outcome.type === "response") return passOn(outcome.response);
  if (outcome.type === "choose-password") return data({ choosePassword: outcome.page }, { headers: headersWith(outcome.setCookies) });
  return data(outcome.page, { headers: headersWith(outcome.setCookies) });
}

export async function action({ request }: Route.ActionArgs) {
  const outcome = await emailCallbackAction(request);
  if (outcome.type === "response") return passOn(outcome.response);
  if (outcome.type === "password-refused") throw data({ choosePassword: outcome.page, passwordError: outcome.message }, { status: 400 });
  // A wrong code: back to the code form (a redirect, so Back never lands on this POST's answer),
  // which says how many tries are left.
  if (!outcome.again) throw outcome.response;
  return outcome.again;
}

export function ErrorBoundary() {
  const error = useRouteError();
  if (isRouteErrorResponse(error) && error.data && typeof error.data === "object" && "choosePassword" in error.data) {
    const { choosePassword, passwordError } = error.data as { choosePassword: ChoosePasswordPage; passwordError: string };
    return <ChoosePassword page={choosePassword} error={passwordError} />;
  }
  throw error;
}

export function headers({ parentHeaders }: Route.HeadersArgs) {
  // The page holds a live token: never cache it. The root's Referrer-Policy (same-origin) already
  // keeps its URL from other sites; "no-referrer" would also make Chromium send `Origin: null` on
  // the button's POST, which React Router's action origin check refuses.
  const headers = new Headers(parentHeaders);
  headers.set("Cache-Control", "private, no-store");
  return headers;
}

/**
 * A sign-up link opened in a browser that did not ask (ADR 061): the link proves the address; the
 * password is chosen here, never the one typed at sign-up (which may have been someone else's).
 */
function ChoosePassword({ page, error }: { page: ChoosePasswordPage; error?: string }) {
  const t = useT();
  return (
    <AuthCard title={t("choosePassword.title")}>
      <p>{t.rich("choosePassword.intro", { address: <strong><Ltr>{page.address}</Ltr></strong> })}</p>
      <DocumentForm action={page.action} label={t("signup.submit")} pendingLabel={t("choosePassword.creating")} id="signup-password-form">
        <CsrfField token={page.csrfToken} />
        <input type="hidden" name="token" value={page.token} />
        <input type="hidden" name="email" value={page.address} />
        <input type="hidden" name="callbackUrl" value={page.callbackUrl} />
        <Field id="signup-link-password" label={t("signup.passwordLabel")} type="password" name="password" autoComplete="new-password" minLength={page.minLength} required error={error} />
        <p className="muted">{t("password.hint", { min: page.minLength })}</p>
      </DocumentForm>
    </AuthCard>
  );
}

export default function ConfirmEmailSignIn({ loaderData }: Route.ComponentProps) {
  const t = useT();
  if ("choosePassword" in loaderData) return <ChoosePassword page={loaderData.choosePassword} />;
  const { address, token, callbackUrl, csrfToken, action } = loaderData;
  return (
    <AuthCard title={t("signin.title")}>
      <p>{t.rich("signin.confirm", { address: <strong id="confirm-address"><Ltr>{address}</Ltr></strong> })}</p>
      <DocumentForm action={action} label={t("signin.confirmButton", { address })} pendingLabel={t("common.signingIn")} id="email-confirm-form">
        <CsrfField token={csrfToken} />
        <input type="hidden" name="token" value={token} />
        <input type="hidden" name="email" value={address} />
        <input type="hidden" name="callbackUrl" value={callbackUrl} />
      </DocumentForm>
      <p className="muted">{t("signin.confirmIgnore")}</p>
    </AuthCard>
  );
}
