import { data, redirect } from "react-router";
import { AuthCard, CsrfField, DocumentForm } from "~/components/auth-forms";
import { Ltr } from "~/components/ltr";
import { EMAIL_CHANGE_PATH } from "~/auth/email/change";
import { BadRequestError, headersWith, readBody, REAUTH_REQUIRED } from "~/auth/core";
import { confirmEmailChange, emailChangePageData } from "~/auth/email";
import type { Route } from "./+types/account-email";
import { useT } from "~/i18n/react";

// The link of "change your e-mail address" (app/auth/email/change.server.ts): a GET shows the
// button, the POST makes the change.

// The <title> comes from AuthCard, so it always matches the heading of the state shown.
export const meta: Route.MetaFunction = () => [{ name: "robots", content: "noindex" }];

export async function loader({ request }: Route.LoaderArgs) {
  const { page, setCookies } = await emailChangePageData(request);
  return data(page, { status: page.state === "invalid" ? 403 : 200, headers: headersWith(setCookies) });
}

export async function action({ request }: Route.ActionArgs) {
  // The body is read (once, size-limited) before anything else: a body refused as too large or of
  // another type answers with its own status; confirmEmailChange gets the same parsed body.
  try {
    await readBody(request);
  } catch (error) {
    if (error instanceof BadRequestError && error.status !== 400) return data({ state: "expired-form" as const }, { status: error.status });
  }
  const outcome = await confirmEmailChange(request);
  if (outcome.state === "changed" && outcome.signedIn) {
    throw redirect("/account?updated=email", { headers: headersWith(outcome.setCookies) });
  }
  // Not a recent sign-in of the account that asked (ADR 058): nothing changed, the link still works.
  if (outcome.state === "reauth") return data({ state: outcome.state, error: REAUTH_REQUIRED, url: outcome.url }, { status: 403 });
  const status = outcome.state === "changed" ? 200 : outcome.state === "taken" ? 409 : 403;
  return data(outcome.state === "changed" ? { state: outcome.state, address: outcome.address } : { state: outcome.state }, { status });
}

export function headers({ parentHeaders }: Route.HeadersArgs) {
  // The page holds a live token: never cache it. The root's Referrer-Policy (same-origin) already
  // keeps its URL from other sites; "no-referrer" would also make Chromium send `Origin: null` on
  // the button's POST, which React Router's action origin check refuses.
  const headers = new Headers(parentHeaders);
  headers.set("Cache-Control", "private, no-store");
  return headers;
}

export default function ConfirmEmailChange({ loaderData, actionData }: Route.ComponentProps) {
  const t = useT();
  if (actionData?.state === "reauth" && "url" in actionData) {
    return (
      <AuthCard title={t("reauth.confirmTitle")}>
        <p role="alert">{t("reauth.required")}</p>
        <p>
          <a className="button inline" href={actionData.url}>
            {t("reauth.button")}
          </a>
        </p>
      </AuthCard>
    );
  }
  if (actionData) {
    if (actionData.state === "changed" && "address" in actionData) {
      return (
        <AuthCard title={t("emailChange.changedTitle")}>
          <p role="status">{t.rich("emailChange.nowUses", { address: <Ltr>{actionData.address}</Ltr>, strong: (c) => <strong>{c}</strong> })}</p>
          <p>
            <a className="button inline" href="/auth/signin">
              {t("common.signIn")}
            </a>
          </p>
        </AuthCard>
      );
    }
    const message =
      actionData.state === "taken"
        ? t("emailChange.taken")
        : actionData.state === "expired-form"
          ? t("common.formExpired")
          : t("emailChange.expiredLink");
    return (
      <AuthCard title={t("emailChange.notChangedTitle")}>
        <p role="alert">{message}</p>
        <p>
          <a href="/account">{t("common.accountLink")}</a>
        </p>
      </AuthCard>
    );
  }
  if (loaderData.state === "invalid") {
    return (
      <AuthCard title={t("emailChange.notChangedTitle")}>
        <p role="alert">{t("emailChange.expiredLink")}</p>
        <p>
          <a href="/account">{t("common.accountLink")}</a>
        </p>
      </AuthCard>
    );
  }
  const { address, token, csrfToken } = loaderData;
  return (
    <AuthCard title={t("emailChange.confirmTitle")}>
      <p>{t.rich("emailChange.confirmQuestion", { address, strong: (c) => <strong id="confirm-address">{c}</strong> })}</p>
      <DocumentForm action={EMAIL_CHANGE_PATH} label={t("emailChange.confirmButton", { address })} pendingLabel={t("common.saving")} id="email-change-confirm-form">
        <CsrfField token={csrfToken} />
        <input type="hidden" name="token" value={token} />
        <input type="hidden" name="email" value={address} />
      </DocumentForm>
      <p className="muted">{t("emailChange.confirmIgnore")}</p>
    </AuthCard>
  );
}
