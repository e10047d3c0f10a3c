import { data } from "react-router";
import { AuthCard } from "~/components/auth-forms";
import { EmailCodeForm } from "~/components/email-code-form";
import { badRequest } from "~/auth/core";
import { verifyRequestPageData } from "~/auth/signin";
import { describeLifetime } from "~/mail/templates.server";
import type { Route } from "./+types/verify-request";
import { useT } from "~/i18n/react";

export async function loader({ request }: Route.LoaderArgs) {
  const page = await verifyRequestPageData(request);
  const { linkMaxAge, codeMaxAge, ...rest } = page.data;
  return data({ ...rest, linkLifetime: describeLifetime(linkMaxAge), codeLifetime: describeLifetime(codeMaxAge) }, { headers: page.headers });
}

export const action = () => badRequest();

export function headers({ parentHeaders }: Route.HeadersArgs) {
  const headers = new Headers(parentHeaders);
  headers.set("Cache-Control", "private, no-store");
  return headers;
}

export default function VerifyRequest({ loaderData }: Route.ComponentProps) {
  const t = useT();
  const { type, linkLifetime, codeLifetime, codeForm } = loaderData;
  return (
    <AuthCard title={t("emailCode.checkTitle")}>
      {type === "reset" ? <p>{t("verify.reset")}</p> : type === "signup" ? <p>{t("verify.signup")}</p> : <p>{t("verify.signin")}</p>}
      <p className="muted">{t("verify.linkLifetime", { lifetime: linkLifetime })}</p>
      {codeForm ? (
        <>
          <p>{t("verify.codeLifetime", { lifetime: codeLifetime })}</p>
          <EmailCodeForm form={codeForm} />
        </>
      ) : null}
      <p>
        <a href="/">{t("common.backHome")}</a>
      </p>
    </AuthCard>
  );
}
