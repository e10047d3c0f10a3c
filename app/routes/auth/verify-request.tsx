import { data } from "react-router";
import { AuthCard, CsrfField, DocumentForm } from "~/components/auth-forms";
import { EmailCodeForm } from "~/components/email-code-form";
import { badRequest } from "~/auth/core";
import { verifyRequestPageData } from "~/auth/signin";
import { describeLifetime } from "~/mail/templates.server";
import type { Route } from "./+types/verify-request";
import { useT } from "~/i18n/react";
import { Ltr } from "~/components/ltr";

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
  const { type, linkLifetime, codeLifetime, codeForm, codeError, passwordError, address, resend, sentAgain, signedInAs } = loaderData;
  if (signedInAs !== null) {
    return (
      <AuthCard title={t("verify.signedInTitle")}>
        <p className="notice" id="verify-signed-in">
          {signedInAs ? t.rich("signin.signedInAs", { address: <Ltr>{signedInAs}</Ltr> }) : t("verify.signedIn")} {t("verify.nothingToWaitFor")}
        </p>
        <p className="actions">
          <a href="/" className="button inline">
            {t("common.continue")}
          </a>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={t("emailCode.checkTitle")}>
      {sentAgain ? (
        <p className="notice" role="status" id="verify-sent-again">
          {t("verify.sentAgain")}
        </p>
      ) : null}
      {/* A refused code: the same words for a sign-in and a sign-up (which one it was stays unsaid). */}
      {codeError && type !== "reset" ? <p>{t("emailCode.enterHere")}</p> : type === "reset" ? <p>{t("verify.reset")}</p> : type === "signup" ? <p>{t("verify.signup")}</p> : <p>{t("verify.signin")}</p>}
      {address ? (
        <p id="verify-address">
          {t.rich("verify.sentTo", { address: <Ltr>{address}</Ltr>, b: (c) => c })}
        </p>
      ) : null}
      <p className="muted">{t("verify.linkLifetime", { lifetime: linkLifetime })}</p>
      {codeForm ? (
        <>
          <p>{t("verify.codeLifetime", { lifetime: codeLifetime })}</p>
          <EmailCodeForm form={codeForm} codeError={codeError} passwordError={passwordError} />
        </>
      ) : null}
      {resend ? (
        <div className="stack" id="verify-resend">
          <p className="muted">{t("verify.notArrived")}</p>
          <DocumentForm action={resend.action} inline label={t("verify.resend")} pendingLabel={t("common.sending")} id="verify-resend-form">
            <CsrfField token={resend.csrfToken} />
            <input type="hidden" name="email" value={resend.email} />
            {resend.callbackUrl !== null ? <input type="hidden" name="callbackUrl" value={resend.callbackUrl} /> : null}
          </DocumentForm>
        </div>
      ) : null}
      <p>
        <a href="/">{t("common.backHome")}</a>
      </p>
    </AuthCard>
  );
}
