import { data } from "react-router";
import { AuthCard } from "~/components/auth-forms";
import { badRequest, errorPageHeaders } from "~/auth/core";
import { errorPageFor } from "~/auth/signin";
import type { Route } from "./+types/error";
import { useT } from "~/i18n/react";

export async function loader({ request }: Route.LoaderArgs) {
  const page = await errorPageFor(request);
  return data(page, { status: page.status, headers: errorPageHeaders(page.status) });
}

export const action = () => badRequest();

export function headers({ parentHeaders, loaderHeaders }: Route.HeadersArgs) {
  // A 503 (ServiceUnavailable) tells the browser and proxies when to ask again.
  const retryAfter = loaderHeaders.get("Retry-After");
  if (!retryAfter) return parentHeaders;
  const headers = new Headers(parentHeaders);
  headers.set("Retry-After", retryAfter);
  return headers;
}

export default function ErrorPage({ loaderData }: Route.ComponentProps) {
  const t = useT();
  const { heading, message, detail, status, next } = loaderData;
  return (
    <AuthCard title={heading}>
      <p role="alert">{message}</p>
      {detail ? <p className="muted">{detail}</p> : null}
      {next ? (
        <a className="button" href={next.href}>
          {next.label}
        </a>
      ) : status === 403 ? (
        <a className="button" href="/auth/signin">
          {t("common.signIn")}
        </a>
      ) : (
        <p>
          <a href="/">{t("common.homeLink")}</a>
        </p>
      )}
    </AuthCard>
  );
}
