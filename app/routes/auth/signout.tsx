import { data, Form, useNavigation } from "react-router";
import { AuthCard, CsrfField } from "~/components/auth-forms";
import { jsonRedirectMiddleware } from "~/auth/core";
import { signOutAction, signoutPageData } from "~/auth/signin";
import type { Route } from "./+types/signout";
import { useT } from "~/i18n/react";

export const middleware: Route.MiddlewareFunction[] = [jsonRedirectMiddleware(signOutAction)];

export async function loader({ request }: Route.LoaderArgs) {
  const page = await signoutPageData(request);
  return data(page.data, { headers: page.headers });
}

export function action({ request }: Route.ActionArgs) {
  if (request.method !== "POST") throw data("Bad request.", { status: 400 });
  return signOutAction(request);
}

export default function SignOut({ loaderData }: Route.ComponentProps) {
  const t = useT();
  const navigation = useNavigation();
  const pending = navigation.state !== "idle" && navigation.formAction?.startsWith("/auth/signout");
  // Nothing to sign out of (no session, no sign-in waiting for its second step): say so.
  if (!loaderData.signedIn && !loaderData.pendingSignIn) {
    return (
      <AuthCard title={t("signout.title")}>
        <p id="signout-not-signed-in">{t("signout.notSignedIn")}</p>
        <p className="actions">
          <a href="/auth/signin" className="button">
            {t("common.signIn")}
          </a>
          <a href="/">{t("common.backHome")}</a>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={t("signout.title")}>
      <p>{t("signout.question")}</p>
      <Form method="post" action="/auth/signout">
        <CsrfField token={loaderData.csrfToken} />
        <input type="hidden" name="callbackUrl" value={loaderData.callbackUrl} />
        <button type="submit" className="button" aria-disabled={pending || undefined}>
          {pending ? t("signout.pending") : t("signout.submit")}
        </button>
      </Form>
      <p>
        <a href={loaderData.cancelUrl} id="signout-cancel">
          {t("signout.cancel")}
        </a>
      </p>
    </AuthCard>
  );
}
