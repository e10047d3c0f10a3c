// The frame the sign-up, forgotten-password and new-password pages share: the card, the form-wide
// error, and the ErrorBoundary that draws a refused POST's answer (app/routes/password-page.server.ts)
// with the page's own view.
import type { ReactNode } from "react";
import { isRouteErrorResponse, useRouteError } from "react-router";
import { AuthCard } from "./auth-forms";

/** What every password page is drawn from: the GET's data, or a refused POST's answer. */
export type PasswordPage<Values> = { csrfToken: string; values: Values; formError: string | null; fieldErrors: Record<string, string | undefined> };

export function PasswordPageFrame({ title, formError, children }: { title: string; formError: string | null; children: ReactNode }) {
  return (
    <AuthCard title={title}>
      {formError ? (
        <p className="alert" role="alert">
          {formError}
        </p>
      ) : null}
      {children}
    </AuthCard>
  );
}

/** The route's ErrorBoundary: a refused POST (a thrown answer with the page's values) drawn by `View`. */
export function passwordPageErrorBoundary<Values>(View: (props: { page: PasswordPage<Values> }) => ReactNode) {
  return function PasswordPageErrorBoundary() {
    const error = useRouteError();
    if (isRouteErrorResponse(error) && error.data && typeof error.data === "object" && "values" in error.data) {
      return <View page={error.data as PasswordPage<Values>} />;
    }
    throw error;
  };
}
