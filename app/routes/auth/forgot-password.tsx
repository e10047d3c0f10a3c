import { data, isRouteErrorResponse, useRouteError } from "react-router";
import { AuthCard, CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { badRequest, headersWith } from "~/auth/core";
import { forgotPasswordAction, forgotPasswordPageData } from "~/auth/passwords";
import { passwordPageAnswer } from "../password-page.server";
import type { Route } from "./+types/forgot-password";

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
  const fieldErrors = page.fieldErrors as Record<string, string | undefined>;
  return (
    <AuthCard title="Forgot your password?">
      {formError ? (
        <p className="alert" role="alert">
          {formError}
        </p>
      ) : null}
      <p>Enter the address of your account. If it has one, we send it a link and a code to choose a new password.</p>
      <DocumentForm action="/auth/forgot-password" label="Send me a link" pendingLabel="Sending…" id="forgot-password-form">
        <CsrfField token={csrfToken} />
        <Field id="forgot-email" label="Email" type="email" name="email" autoComplete="email" defaultValue={values.email} required error={fieldErrors.email} />
      </DocumentForm>
      <p>
        <a href="/auth/signin">Back to sign in</a>
      </p>
    </AuthCard>
  );
}
