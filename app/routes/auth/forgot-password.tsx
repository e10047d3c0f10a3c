import { CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { PasswordPageFrame, passwordPageErrorBoundary, type PasswordPage } from "~/components/password-page";
import { badRequest } from "~/auth/core";
import { forgotPasswordAction, forgotPasswordPageData, type ForgotValues } from "~/auth/passwords";
import { passwordPageData, passwordPageHeaders, passwordPagePost } from "../password-page.server";
import type { Route } from "./+types/forgot-password";

const post = passwordPagePost(forgotPasswordAction);
export const middleware: Route.MiddlewareFunction[] = post.middleware;
export const action = post.action;

export const headers = (args: Route.HeadersArgs) => passwordPageHeaders(args);

export async function loader({ request }: Route.LoaderArgs) {
  const page = forgotPasswordPageData(request);
  if (!page) throw badRequest();
  return passwordPageData(page);
}

export default function ForgotPassword({ loaderData }: Route.ComponentProps) {
  return <View page={loaderData} />;
}

export const ErrorBoundary = passwordPageErrorBoundary(View);

function View({ page }: { page: PasswordPage<ForgotValues> }) {
  const { csrfToken, values, formError, fieldErrors } = page;
  return (
    <PasswordPageFrame title="Forgot your password?" formError={formError}>
      <p>Enter the address of your account. If it has one, we send it a link and a code to choose a new password.</p>
      <DocumentForm action="/auth/forgot-password" label="Send me a link" pendingLabel="Sending…" id="forgot-password-form">
        <CsrfField token={csrfToken} />
        <Field id="forgot-email" label="Email" type="email" name="email" autoComplete="email" defaultValue={values.email} required error={fieldErrors.email} />
      </DocumentForm>
      <p>
        <a href="/auth/signin">Back to sign in</a>
      </p>
    </PasswordPageFrame>
  );
}
