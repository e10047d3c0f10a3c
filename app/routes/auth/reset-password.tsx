import { CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { Ltr } from "~/components/ltr";
import { PasswordPageFrame, passwordPageErrorBoundary, type PasswordPage } from "~/components/password-page";
import { resetPasswordAction, resetPasswordPageData, type ResetValues } from "~/auth/passwords";
import { passwordPageData, passwordPageHeaders, passwordPagePost } from "../password-page.server";
import type { Route } from "./+types/reset-password";
import { useT } from "~/i18n/react";

const post = passwordPagePost(resetPasswordAction);
export const middleware: Route.MiddlewareFunction[] = post.middleware;
export const action = post.action;

export async function loader({ request }: Route.LoaderArgs) {
  const page = await resetPasswordPageData(request);
  if (page.kind === "response") throw page.response;
  return passwordPageData(page, page.passwordError ? { password: page.passwordError } : {});
}

export const headers = (args: Route.HeadersArgs) => passwordPageHeaders(args, true);

export default function ResetPassword({ loaderData }: Route.ComponentProps) {
  return <View page={loaderData} />;
}

export const ErrorBoundary = passwordPageErrorBoundary(View);

function View({ page }: { page: PasswordPage<ResetValues> }) {
  const { csrfToken, values, formError, fieldErrors } = page;
  const t = useT();
  return (
    <PasswordPageFrame title={t("reset.title")} formError={formError}>
      {values.email ? <p>{t.rich("reset.for", { address: <Ltr>{values.email}</Ltr> })}</p> : null}
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
    </PasswordPageFrame>
  );
}
