import { data } from "react-router";
import { AuthCard } from "~/components/auth-forms";
import { badRequest } from "~/auth/core";
import { errorPageFor } from "~/auth/signin";
import type { Route } from "./+types/error";
import { useT } from "~/i18n/react";

export async function loader({ request }: Route.LoaderArgs) {
  const page = await errorPageFor(request);
  return data(page, { status: page.status });
}

export const action = () => badRequest();

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
