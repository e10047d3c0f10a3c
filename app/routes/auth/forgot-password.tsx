import { CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { PasswordPageFrame, passwordPageErrorBoundary, type PasswordPage } from "~/components/password-page";
import { badRequest } from "~/auth/core";
import { forgotPasswordAction, forgotPasswordPageData, type ForgotValues } from "~/auth/passwords";
import { passwordPageData, passwordPageHeaders, passwordPagePost } from "../password-page.server";
import type { Route } from "./+types/forgot-password";
import { useT } from "~/i18n/react";

const post = passwordPagePost(forgotPasswordAction);
export const middleware: Route.MiddlewareFunction[] = post.middleware;
export const action = post.action;

export const headers = (args: Route.HeadersArgs) => passwordPageHeaders(args);

export async function loader({ request }: Route.LoaderArgs) {
  const page = forgotPasswordPageData(request);
  if (!page) throw badRequest();
  return passwordPageData(page, page.fieldErrors);
}

export default function ForgotPassword({ loaderData }: Route.ComponentProps) {
  return <View page={loaderData} />;
}

export const ErrorBoundary = passwordPageErrorBoundary(View);

function View({ page }: { page: PasswordPage<ForgotValues> }) {
  const { csrfToken, values, formError, fieldErrors } = page;
  const t = useT();
  return (
    <PasswordPageFrame title={t("forgot.title")} formError={formError}>
      <p>{t("forgot.intro")}</p>
      <DocumentForm action="/auth/forgot-password" label={t("forgot.submit")} pendingLabel={t("common.sending")} id="forgot-password-form">
        <CsrfField token={csrfToken} />
        <Field id="forgot-email" label={t("forgot.emailLabel")} type="email" name="email" autoComplete="email" defaultValue={values.email} required error={fieldErrors.email} />
      </DocumentForm>
      <p>
        <a href="/auth/signin">{t("forgot.back")}</a>
      </p>
    </PasswordPageFrame>
  );
}
