import { data, Form } from "react-router";
import { AuthCard, CsrfField } from "~/components/auth-forms";
import { headersWith } from "~/auth/core";
import { interactionAction, interactionPage, type InteractionOutcome } from "~/auth/provider";
import { useT } from "~/i18n/react";
import { Ltr } from "~/components/ltr";
import type { Route } from "./+types/oauth-consent";

// An authorization in progress (docs/features/provider.md): sign-in on Vestibule's pages, then
// this consent form, which works without JavaScript. app/auth/provider/interaction.server.ts decides.
export const meta: Route.MetaFunction = () => [{ name: "robots", content: "noindex" }];

function answer(outcome: InteractionOutcome) {
  if (outcome.type === "response") throw outcome.response;
  if (outcome.type === "off") throw data(null, { status: 404 });
  if (outcome.type === "gone") return data({ gone: true as const, page: null }, { status: 404 });
  return data({ gone: false as const, page: outcome.page }, { headers: headersWith(outcome.setCookies) });
}

export const loader = async ({ request, params }: Route.LoaderArgs) => answer(await interactionPage(request, params.uid));

export const action = async ({ request, params }: Route.ActionArgs) => answer(await interactionAction(request, params.uid));

export function headers({ parentHeaders }: Route.HeadersArgs) {
  const headers = new Headers(parentHeaders);
  headers.set("Cache-Control", "private, no-store");
  // The consent form must never be framed by the app it is about (clickjacking).
  headers.set("X-Frame-Options", "DENY");
  return headers;
}

export default function OAuthConsent({ loaderData, actionData }: Route.ComponentProps) {
  const t = useT();
  const { page } = actionData ?? loaderData;
  if (!page) {
    return (
      <AuthCard title={t("consent.gone.heading")}>
        <p role="alert">{t("consent.gone.message")}</p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={t("consent.title", { app: page.clientName })}>
      <p id="consent-host">{t.rich("consent.host", { host: <Ltr>{page.clientHost}</Ltr> })}</p>
      {page.redirectHost ? <p id="consent-redirect-host">{t.rich("consent.redirectHost", { host: <Ltr>{page.redirectHost}</Ltr> })}</p> : null}
      {page.unverified ? (
        <p className="alert" role="note" id="consent-unverified">
          {t.rich("consent.unverified", { host: <Ltr>{page.clientHost}</Ltr> })}
        </p>
      ) : null}
      {page.userEmail ? <p className="muted" id="consent-signed-in-as">{t.rich("consent.signedInAs", { email: <Ltr>{page.userEmail}</Ltr> })}</p> : null}
      {page.scopes.length ? (
        <>
          <p id="consent-asks">{t("consent.asks")}</p>
          <ul aria-labelledby="consent-asks" id="consent-scopes">
            {page.scopes.map((scope) => (
              <li key={scope} data-scope={scope}>
                {t(`consent.scope.${scope}`)}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <Form method="post" action={page.action} reloadDocument id="consent-form" className="stack">
        <CsrfField token={page.csrfToken} />
        <button type="submit" name="decision" value="allow" className="button" id="consent-allow">
          {t("consent.allow")}
        </button>
        <button type="submit" name="decision" value="deny" className="button secondary" id="consent-deny">
          {t("consent.deny")}
        </button>
      </Form>
    </AuthCard>
  );
}
