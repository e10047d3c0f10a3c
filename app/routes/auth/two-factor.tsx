import { data } from "react-router";
import { AuthCard, CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { headersWith, jsonRedirectMiddleware } from "~/auth/core";
import { twoFactorAction, twoFactorJsonAction, twoFactorPageData, type TwoFactorOutcome } from "~/auth/signin";
import type { Route } from "./+types/two-factor";
import { useT } from "~/i18n/react";
import { PasskeySecondStep } from "~/components/passkey-second-step";

// The second-factor page: a plain form POSTing `csrfToken` and `code` back here;
// app/auth/signin/two-factor-page.server.ts decides. JSON-mode clients get `{url}` before rendering.
export const middleware: Route.MiddlewareFunction[] = [jsonRedirectMiddleware(twoFactorJsonAction)];

export const meta: Route.MetaFunction = () => [{ name: "robots", content: "noindex" }];

/** The page, or a thrown Response: redirects go on, a refused body (413, 415) reaches the error boundary. */
function answer(outcome: TwoFactorOutcome) {
  if (outcome.type === "response") throw outcome.response;
  return data(outcome.page, { status: outcome.status, headers: headersWith(outcome.setCookies) });
}

export const loader = async ({ request }: Route.LoaderArgs) => answer(await twoFactorPageData(request));

export const action = async ({ request }: Route.ActionArgs) => answer(await twoFactorAction(request));

export function headers({ parentHeaders }: Route.HeadersArgs) {
  const headers = new Headers(parentHeaders);
  headers.set("Cache-Control", "private, no-store");
  return headers;
}

export default function TwoFactor({ loaderData, actionData }: Route.ComponentProps) {
  const t = useT();
  const { csrfToken, error, code, passkey } = actionData ?? loaderData;
  return (
    <AuthCard title={t("twoFactor.title")}>
      <p id="two-factor-help">
        {code ? `${t("error.TwoFactorRequired")} ${t("twoFactor.lostDevice")}` : t("twoFactor.passkeyIntro")}
      </p>
      {/* A refused passkey: the form below shows a code's refusal beside its field. */}
      {error && !code ? (
        <p className="alert" role="alert" id="two-factor-error">
          {error}
        </p>
      ) : null}
      {passkey ? <PasskeySecondStep csrfToken={csrfToken} withCode={code} /> : null}
      {code ? (
        <DocumentForm action="/auth/two-factor" label={t("twoFactor.verify")} pendingLabel={t("twoFactor.verifying")} id="two-factor-form">
          <CsrfField token={csrfToken} />
          <Field
            id="two-factor-code"
            label={t("twoFactor.codeLabel")}
            name="code"
            type="text"
            inputMode="numeric"
            autoComplete="one-time-code"
            autoCapitalize="off"
            spellCheck={false}
            maxLength={64}
            required
            autoFocus
            error={error}
          />
        </DocumentForm>
      ) : null}
      <p>
        <a href="/auth/signin">{t("twoFactor.otherWay")}</a>
      </p>
    </AuthCard>
  );
}
