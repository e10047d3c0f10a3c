import { data } from "react-router";
import { AuthCard, CsrfField, DocumentForm } from "~/components/auth-forms";
import { headersWith, jsonRedirectMiddleware } from "~/auth/core";
import { wasntMeAction, wasntMeJsonAction, wasntMeLoader, type WasntMePage } from "~/auth/accounts";
import type { Route } from "./+types/wasnt-me";
import { useT } from "~/i18n/react";

// "This wasn't me" (ADR 081): the link of every security e-mail. A GET only
// shows the page and its button (mail scanners open every link); the button's POST acts.
export const middleware: Route.MiddlewareFunction[] = [jsonRedirectMiddleware(wasntMeJsonAction)];

export const meta: Route.MetaFunction = () => [{ name: "robots", content: "noindex" }];

export async function loader({ request }: Route.LoaderArgs) {
  const { page, status, setCookies } = await wasntMeLoader(request);
  return data(page, { status, headers: headersWith(setCookies) });
}

export async function action({ request }: Route.ActionArgs) {
  const outcome = await wasntMeAction(request);
  if (outcome.type === "response") return outcome.response;
  const { page, status, setCookies } = outcome.answer;
  const headers = headersWith(setCookies);
  if (page.state === "limited") headers.set("Retry-After", String(page.retryAfterSeconds));
  return data(page, { status, headers });
}

export function headers({ parentHeaders }: Route.HeadersArgs) {
  // The page holds a live token: never cached. (Referrer-Policy same-origin keeps its URL from other sites.)
  const headers = new Headers(parentHeaders);
  headers.set("Cache-Control", "private, no-store");
  return headers;
}

export default function WasntMe({ loaderData, actionData }: Route.ComponentProps) {
  // After the button the action's answer is the page; the loader then sees no token in the URL.
  return <View page={(actionData as WasntMePage | undefined) ?? loaderData} />;
}

function View({ page }: { page: WasntMePage }) {
  const t = useT();
  if (page.state === "confirm") {
    return (
      <AuthCard title={t("wasntMe.title")}>
        {page.formError ? (
          <p className="alert" role="alert">
            {page.formError}
          </p>
        ) : null}
        {page.accountGone ? (
          <>
            <p id="wasnt-me-gone">{t("wasntMe.goneIntro")}</p>
            <p>{t("wasntMe.goneAfter")}</p>
          </>
        ) : (
          <>
            <p>{t("wasntMe.intro")}</p>
            <p>{t("wasntMe.after")}</p>
          </>
        )}
        <DocumentForm
          action="/auth/wasnt-me"
          label={page.accountGone ? t("wasntMe.goneSubmit") : t("wasntMe.submit")}
          pendingLabel={page.accountGone ? t("common.sending") : t("wasntMe.submitting")}
          id="wasnt-me-form"
        >
          <CsrfField token={page.csrfToken} />
          <input type="hidden" name="token" value={page.token} />
          <input type="hidden" name="email" value={page.email} />
        </DocumentForm>
        <p className="muted">{t("wasntMe.itWasMe")}</p>
      </AuthCard>
    );
  }
  if (page.state === "done") {
    return (
      <AuthCard title={page.accountGone ? t("wasntMe.goneDoneTitle") : t("wasntMe.doneTitle")}>
        <p role="status" id="wasnt-me-done">
          {page.accountGone ? t("wasntMe.goneDone") : t("wasntMe.done")}
        </p>
        {page.accountGone ? null : page.forgotPasswordUrl ? (
          <p>
            {t("wasntMe.nextPassword")} <a href={page.forgotPasswordUrl} id="wasnt-me-reset">{t("wasntMe.resetLink")}</a>
          </p>
        ) : (
          <p>
            {t("wasntMe.nextSignIn")} <a href={page.signInUrl}>{t("common.signIn")}</a>
          </p>
        )}
      </AuthCard>
    );
  }
  if (page.state === "limited") {
    return (
      <AuthCard title={t("wasntMe.title")}>
        <p role="alert">{t("error.RateLimitedLater")}</p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={t("wasntMe.invalidTitle")}>
      <p role="alert" id="wasnt-me-invalid">{t("wasntMe.invalid")}</p>
      {page.forgotPasswordUrl ? (
        <p>
          {t("wasntMe.worried")} <a href={page.forgotPasswordUrl}>{t("wasntMe.resetLink")}</a>
        </p>
      ) : null}
    </AuthCard>
  );
}
