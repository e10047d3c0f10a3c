import { data } from "react-router";
import { AuthCard } from "~/components/auth-forms";
import { EmailCodeForm } from "~/components/email-code-form";
import { badRequest } from "~/auth/core";
import { verifyRequestPageData } from "~/auth/signin";
import { describeLifetime } from "~/mail/templates.server";
import type { Route } from "./+types/verify-request";

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
  const { type, linkLifetime, codeLifetime, codeForm } = loaderData;
  return (
    <AuthCard title="Check your email">
      {type === "reset" ? (
        <p>If an account uses that address, we sent it a link to choose a new password.</p>
      ) : type === "signup" ? (
        <p>A link has been sent to your email address. Open it to continue.</p>
      ) : (
        <p>A sign in link has been sent to your email address.</p>
      )}
      <p className="muted">The link works once and expires after {linkLifetime}. You can open it on any device.</p>
      {codeForm ? (
        <>
          <p>Or enter the 6-digit code from the e-mail here. It works in this browser only and expires after {codeLifetime}.</p>
          <EmailCodeForm form={codeForm} />
        </>
      ) : null}
      <p>
        <a href="/">Back to the home page</a>
      </p>
    </AuthCard>
  );
}
