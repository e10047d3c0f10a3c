import { data, isRouteErrorResponse, useRouteError } from "react-router";
import { AuthCard, CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { headersWith } from "~/auth/core";
import { resetPasswordAction, resetPasswordPageData } from "~/auth/passwords";
import { passwordPageAnswer } from "../password-page.server";
import type { Route } from "./+types/reset-password";
import { useT } from "~/i18n/react";

export async function loader({ request }: Route.LoaderArgs) {
  const page = await resetPasswordPageData(request);
  if (page.kind === "response") throw page.response;
  return data({ csrfToken: page.csrfToken, values: page.values, formError: null, fieldErrors: {} as Record<string, string> }, { headers: headersWith(page.setCookies) });
}

export async function action({ request }: Route.ActionArgs) {
  return passwordPageAnswer(await resetPasswordAction(request));
}

export function headers({ parentHeaders }: Route.HeadersArgs) {
  // The page holds a live token: never cache it.
  const headers = new Headers(parentHeaders);
  headers.set("Cache-Control", "private, no-store");
  return headers;
}

type PageData = Route.ComponentProps["loaderData"];

export default function ResetPassword({ loaderData }: Route.ComponentProps) {
  return <View page={loaderData} />;
}

/** A refused POST: the form again, drawn from the action's answer (see password-page.server.ts). */
export function ErrorBoundary() {
  const error = useRouteError();
  if (isRouteErrorResponse(error) && error.data && typeof error.data === "object" && "values" in error.data) {
    return <View page={error.data as PageData} />;
  }
  throw error;
}

function View({ page }: { page: PageData }) {
  const { csrfToken, values, formError } = page;
  const t = useT();
  const fieldErrors = page.fieldErrors as Record<string, string | undefined>;
  return (
    <AuthCard title={t("reset.title")}>
      {formError ? (
        <p className="alert" role="alert">
          {formError}
        </p>
      ) : null}
      {values.email ? <p>{t("reset.for", { address: values.email })}</p> : null}
      <DocumentForm action="/auth/reset-password" label={t("reset.submit")} pendingLabel={t("common.saving")} id="reset-password-form">
        <CsrfField token={csrfToken} />
        {values.token ? <input type="hidden" name="token" value={values.token} /> : null}
        {values.email ? <input type="hidden" name="email" value={values.email} /> : null}
        {values.byCode ? (
          <Field id="reset-code" label={t("reset.codeLabel")} name="code" type="text" inputMode="numeric" autoComplete="one-time-code" maxLength={12} required error={fieldErrors.code} />
        ) : null}
        <Field
          id="reset-password"
          label={t("reset.passwordLabel")}
          type="password"
          name="password"
          autoComplete="new-password"
          minLength={values.minLength}
          required
          error={fieldErrors.password}
        />
        <p className="muted">{t("password.hint", { min: values.minLength })}</p>
      </DocumentForm>
    </AuthCard>
  );
}
