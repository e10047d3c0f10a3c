import { Form } from "react-router";
import { ACCOUNT_FORM_ACTION } from "./account-sections";
import { useT } from "~/i18n/react";
import type { AppWithAccess } from "~/auth/provider";
import { CsrfField } from "./auth-forms";
import { LocalTime } from "./local-time";

/**
 * /account: the apps the user allowed to use their account through Vestibule's provider
 * (docs/features/provider.md), each with Remove access. Plain forms: no JavaScript needed.
 */
export function AppsSection({ csrfToken, apps }: { csrfToken: string; apps: AppWithAccess[] }) {
  const t = useT();
  return (
    <section className="card" aria-labelledby="apps-heading">
      <h2 id="apps-heading">{t("apps.heading")}</h2>
      {apps.length === 0 ? (
        <p className="muted">{t("apps.none")}</p>
      ) : (
        <ul className="sessions" id="apps">
          {apps.map((app) => (
            <li key={app.clientId} data-client-id={app.clientId}>
              <div>
                <div>
                  {app.name} <span className="muted">({app.host})</span>
                </div>
                <div className="muted">
                  {t.rich("apps.granted", { granted: <LocalTime value={app.grantedAt} /> })}
                  {app.lastUsedAt ? <> {t.rich("apps.lastUsed", { lastUsed: <LocalTime value={app.lastUsedAt} /> })}</> : null}
                </div>
                {app.scopes.length ? <div className="muted">{t("apps.scopes", { scopes: app.scopes.join(", ") })}</div> : null}
              </div>
              <Form method="post" action={ACCOUNT_FORM_ACTION}>
                <CsrfField token={csrfToken} />
                <input type="hidden" name="intent" value="revoke-app" />
                <input type="hidden" name="clientId" value={app.clientId} />
                <button type="submit" className="button danger inline" aria-label={t("apps.revokeNamed", { app: app.name })}>
                  {t("apps.revoke")}
                </button>
              </Form>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
