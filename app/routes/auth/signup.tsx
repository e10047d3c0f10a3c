import { CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { PasswordPageFrame, passwordPageErrorBoundary, type PasswordPage } from "~/components/password-page";
import { badRequest } from "~/auth/core";
import { signupAction, signupPageData, type SignupValues } from "~/auth/passwords";
import { passwordPageData, passwordPageHeaders, passwordPagePost } from "../password-page.server";
import type { Route } from "./+types/signup";

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
  return (
    <PasswordPageFrame title="Create an account" formError={formError}>
      <DocumentForm action="/auth/signup" label="Create account" pendingLabel="Sending…" id="signup-form">
        <CsrfField token={csrfToken} />
        <input type="hidden" name="callbackUrl" value={values.callbackUrl} />
        <Field id="signup-email" label="Email" type="email" name="email" autoComplete="email" defaultValue={values.email} required error={fieldErrors.email} />
        <Field id="signup-name" label="Name (optional)" type="text" name="name" autoComplete="name" defaultValue={values.name} maxLength={100} error={fieldErrors.name} />
        <Field
          id="signup-password"
          label="Password"
          type="password"
          name="password"
          autoComplete="new-password"
          minLength={values.minLength}
          required
          error={fieldErrors.password}
        />
        <p className="muted">At least {values.minLength} characters. Long phrases of unrelated words are good; common passwords are refused.</p>
      </DocumentForm>
      <p className="muted">We send a link and a code to the address; the account exists once you use one of them.</p>
      <p>
        Already have an account? <a href="/auth/signin">Sign in</a>
      </p>
    </PasswordPageFrame>
  );
}
