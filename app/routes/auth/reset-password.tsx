import { data, isRouteErrorResponse, useRouteError } from "react-router";
import { AuthCard, CsrfField, DocumentForm, Field } from "~/components/auth-forms";
import { headersWith } from "~/auth/core";
import { resetPasswordAction, resetPasswordPageData } from "~/auth/passwords";
import { passwordPageAnswer } from "../password-page.server";
import type { Route } from "./+types/reset-password";

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
  const fieldErrors = page.fieldErrors as Record<string, string | undefined>;
  return (
    <AuthCard title="Choose a new password">
      {formError ? (
        <p className="alert" role="alert">
          {formError}
        </p>
      ) : null}
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
    </AuthCard>
  );
}
