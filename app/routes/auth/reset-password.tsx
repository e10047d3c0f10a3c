import { CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { PasswordPageFrame, passwordPageErrorBoundary, type PasswordPage } from "~/components/password-page";
import { resetPasswordAction, resetPasswordPageData, type ResetValues } from "~/auth/passwords";
import { passwordPageData, passwordPageHeaders, passwordPagePost } from "../password-page.server";
import type { Route } from "./+types/reset-password";

const post = passwordPagePost(resetPasswordAction);
export const middleware: Route.MiddlewareFunction[] = post.middleware;
export const action = post.action;

export async function loader({ request }: Route.LoaderArgs) {
  const page = await resetPasswordPageData(request);
  if (page.kind === "response") throw page.response;
  return passwordPageData(page);
}

export const headers = (args: Route.HeadersArgs) => passwordPageHeaders(args, true);

export default function ResetPassword({ loaderData }: Route.ComponentProps) {
  return <View page={loaderData} />;
}

export const ErrorBoundary = passwordPageErrorBoundary(View);

function View({ page }: { page: PasswordPage<ResetValues> }) {
  const { csrfToken, values, formError, fieldErrors } = page;
  return (
    <PasswordPageFrame title="Choose a new password" formError={formError}>
      {values.email ? <p>For {values.email}. Every device signed in to the account is signed out; this one is signed in.</p> : null}
      <DocumentForm action="/auth/reset-password" label="Set new password" pendingLabel="Saving…" id="reset-password-form">
        <CsrfField token={csrfToken} />
        {values.token ? <input type="hidden" name="token" value={values.token} /> : null}
        {values.email ? <input type="hidden" name="email" value={values.email} /> : null}
        {values.byCode ? (
          <Field id="reset-code" label="Code from the e-mail" name="code" type="text" inputMode="numeric" autoComplete="one-time-code" maxLength={12} required error={fieldErrors.code} />
        ) : null}
        <Field
          id="reset-password"
          label="New password"
          type="password"
          name="password"
          autoComplete="new-password"
          minLength={values.minLength}
          required
          error={fieldErrors.password}
        />
        <p className="muted">At least {values.minLength} characters. Long phrases of unrelated words are good; common passwords are refused.</p>
      </DocumentForm>
    </PasswordPageFrame>
  );
}
