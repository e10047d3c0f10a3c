import { data, isRouteErrorResponse, useRouteError } from "react-router";
import { AuthCard, CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { badRequest, headersWith } from "~/auth/core";
import { signupAction, signupPageData } from "~/auth/passwords";
import { passwordPageAnswer } from "../password-page.server";
import type { Route } from "./+types/signup";
import { useT } from "~/i18n/react";

export async function loader({ request }: Route.LoaderArgs) {
  const page = signupPageData(request);
  if (!page) throw badRequest();
  return data({ csrfToken: page.csrfToken, values: page.values, formError: null, fieldErrors: {} as Record<string, string> }, { headers: headersWith(page.setCookies) });
}

export async function action({ request }: Route.ActionArgs) {
  return passwordPageAnswer(await signupAction(request));
}

type PageData = Route.ComponentProps["loaderData"];

export default function SignUp({ loaderData }: Route.ComponentProps) {
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
    <AuthCard title={t("signup.title")}>
      {formError ? (
        <p className="alert" role="alert">
          {formError}
        </p>
      ) : null}
      <DocumentForm action="/auth/signup" label={t("signup.submit")} pendingLabel={t("common.sending")} id="signup-form">
        <CsrfField token={csrfToken} />
        <input type="hidden" name="callbackUrl" value={values.callbackUrl} />
        <Field id="signup-email" label={t("signup.emailLabel")} type="email" name="email" autoComplete="email" defaultValue={values.email} required error={fieldErrors.email} />
        <Field id="signup-name" label={t("signup.nameLabel")} type="text" name="name" autoComplete="name" defaultValue={values.name} maxLength={100} error={fieldErrors.name} />
        <Field
          id="signup-password"
          label={t("signup.passwordLabel")}
          type="password"
          name="password"
          autoComplete="new-password"
          minLength={values.minLength}
          required
          error={fieldErrors.password}
        />
        <p className="muted">{t("password.hint", { min: values.minLength })}</p>
      </DocumentForm>
      <p className="muted">{t("signup.weSend")}</p>
      <p>
        {t("signup.haveAccount")} <a href="/auth/signin">{t("common.signIn")}</a>
      </p>
    </AuthCard>
  );
}
