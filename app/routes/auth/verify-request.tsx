import { AuthCard } from "~/components/auth-forms";
import { badRequest, getConfig } from "~/auth/core";
import { describeLifetime } from "~/mail/templates.server";
import type { Route } from "./+types/verify-request";

export const loader = () => ({ lifetime: describeLifetime(getConfig().emailTokenMaxAge) });

export const action = () => badRequest();

export default function VerifyRequest({ loaderData }: Route.ComponentProps) {
  return (
    <AuthCard title="Check your email">
      <p>A sign in link has been sent to your email address.</p>
      <p className="muted">The link works once and expires after {loaderData.lifetime}. You can open it on any device.</p>
      <p>
        <a href="/">Back to the home page</a>
      </p>
    </AuthCard>
  );
}
