import { data } from "react-router";
import { AuthCard } from "~/components/auth-forms";
import { badRequest, errorPageData } from "~/auth/core";
import type { Route } from "./+types/error";

export function loader({ request }: Route.LoaderArgs) {
  const page = errorPageData(request);
  return data(page, { status: page.status });
}

export const action = () => badRequest();

export default function ErrorPage({ loaderData }: Route.ComponentProps) {
  const { heading, message, detail, status } = loaderData;
  return (
    <AuthCard title={heading}>
      <p role="alert">{message}</p>
      {detail ? <p className="muted">{detail}</p> : null}
      {status === 403 ? (
        <a className="button" href="/auth/signin">
          Sign in
        </a>
      ) : (
        <p>
          <a href="/">Go to the home page</a>
        </p>
      )}
    </AuthCard>
  );
}
