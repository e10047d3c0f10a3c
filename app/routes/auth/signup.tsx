import { CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { PasswordPageFrame, passwordPageErrorBoundary, type PasswordPage } from "~/components/password-page";
import { badRequest } from "~/auth/core";
import { signupAction, signupPageData, type SignupValues } from "~/auth/passwords";
import { passwordPageData, passwordPageHeaders, passwordPagePost } from "../password-page.server";
import type { Route } from "./+types/signup";
import { useT } from "~/i18n/react";

const post = passwordPagePost(signupAction);
export const middleware: Route.MiddlewareFunction[] = post.middleware;
export const action = post.action;

export const headers = (args: Route.HeadersArgs) => passwordPageHeaders(args);

export async function loader({ request }: Route.LoaderArgs) {
  const page = signupPageData(request);
  if (!page) throw badRequest();
  return passwordPageData(page);
}

export default function SignUp({ loaderData }: Route.ComponentProps) {
  return <View page={loaderData} />;
}

export const ErrorBoundary = passwordPageErrorBoundary(View);

function View({ page }: { page: PasswordPage<SignupValues> }) {
  const { csrfToken, values, formError, fieldErrors } = page;
  const t = useT();
  return (
    <PasswordPageFrame title={t("signup.title")} formError={formError}>
      <DocumentForm action="/auth/signup" label={t("signup.submit")} pendingLabel={t("common.sending")} id="signup-form">
        <CsrfField token={csrfToken} />
        <input type="hidden" name="callbackUrl" value={values.callbackUrl} />
        <Field id="signup-email" label={t("signup.emailLabel")} type="email" name="email" autoComplete="email" defaultValue={values.email} required error={fieldErrors.email} />
        <Field id="signup-name" label={t("signup.nameLabel")} type="text" name="name" autoComplete="name" defaultValue={values.name} error={fieldErrors.name} />
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
        {/* A refused form comes back with the address and name as typed; a password never travels back to a page. */}
        {formError || Object.keys(fieldErrors).length ? (
          <p className="muted" id="signup-password-again">
            {t("signup.passwordAgain")}
          </p>
        ) : null}
      </DocumentForm>
      <p className="muted">{t("signup.weSend")}</p>
      <p>
        {t("signup.haveAccount")} <a href="/auth/signin">{t("common.signIn")}</a>
      </p>
    </PasswordPageFrame>
  );
}
