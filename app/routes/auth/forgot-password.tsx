import { data, isRouteErrorResponse, useRouteError } from "react-router";
import { AuthCard, CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { badRequest, headersWith } from "~/auth/core";
import { forgotPasswordAction, forgotPasswordPageData } from "~/auth/passwords";
import { passwordPageAnswer } from "../password-page.server";
import type { Route } from "./+types/forgot-password";
import { useT } from "~/i18n/react";

export async function loader({ request }: Route.LoaderArgs) {
  const page = forgotPasswordPageData(request);
  if (!page) throw badRequest();
  return data({ csrfToken: page.csrfToken, values: page.values, formError: null, fieldErrors: {} as Record<string, string> }, { headers: headersWith(page.setCookies) });
}

export async function action({ request }: Route.ActionArgs) {
  return passwordPageAnswer(await forgotPasswordAction(request));
}

type PageData = Route.ComponentProps["loaderData"];

export default function ForgotPassword({ loaderData }: Route.ComponentProps) {
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
    <AuthCard title={t("forgot.title")}>
      {formError ? (
        <p className="alert" role="alert">
          {formError}
        </p>
      ) : null}
      <p>{t("forgot.intro")}</p>
      <DocumentForm action="/auth/forgot-password" label={t("forgot.submit")} pendingLabel={t("common.sending")} id="forgot-password-form">
        <CsrfField token={csrfToken} />
        <Field id="forgot-email" label={t("forgot.emailLabel")} type="email" name="email" autoComplete="email" defaultValue={values.email} required error={fieldErrors.email} />
      </DocumentForm>
      <p>
        <a href="/auth/signin">{t("forgot.back")}</a>
      </p>
    </AuthCard>
  );
}
