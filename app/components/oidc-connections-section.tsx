// The OpenID Connect connections section of /orgs/<slug> (docs/features/oidc-connections.md): the
// connections with the redirect URI each needs registered at the provider, a plain form to add one
// (issuer, client id and secret, the verified domains it serves, the role it gives) and a remove
// button each. Works without JavaScript; every text from the catalogue.
import { Form } from "react-router";
import { useT } from "~/i18n/react";
import type { MessageKey } from "~/i18n/catalogues/en";
import { CsrfField, Field } from "./auth-forms";

export type OidcConnectionsData = {
  connections: { id: string; issuer: string; clientId: string; domains: string; defaultRole: string; callbackUrl: string; signinUrl: string }[];
  verifiedDomains: string[];
};

const ROLE_KEYS: Record<"member" | "admin", MessageKey> = { member: "org.role.member", admin: "org.role.admin" };

export function OidcConnectionsSection({ data, csrfToken }: { data: OidcConnectionsData; csrfToken: string }) {
  const t = useT();
  return (
    <section className="card" aria-labelledby="oidc-heading">
      <h2 id="oidc-heading">{t("org.oidc.title")}</h2>
      <p>{t("org.oidc.intro")}</p>
      {data.connections.length === 0 ? <p>{t("org.oidc.none")}</p> : null}
      <ul className="sessions" id="oidc-connections">
        {data.connections.map((c) => (
          <li key={c.id} data-connection={c.id}>
            <div>
              <strong dir="ltr">{c.issuer}</strong>
              <dl className="profile">
                <dt>{t("org.oidc.clientId")}</dt>
                <dd dir="ltr">{c.clientId}</dd>
                <dt>{t("org.oidc.servesDomains")}</dt>
                <dd dir="ltr">{c.domains}</dd>
                <dt>{t("org.oidc.role")}</dt>
                <dd>{c.defaultRole === "admin" || c.defaultRole === "member" ? t(ROLE_KEYS[c.defaultRole]) : c.defaultRole}</dd>
                <dt>{t("org.oidc.redirectUri")}</dt>
                <dd dir="ltr">
                  <code>{c.callbackUrl}</code>
                </dd>
                <dt>{t("org.oidc.signin")}</dt>
                <dd dir="ltr">
                  <code>{c.signinUrl}</code>
                </dd>
              </dl>
            </div>
            <Form method="post" reloadDocument>
              <CsrfField token={csrfToken} />
              <input type="hidden" name="intent" value="oidc-remove" />
              <input type="hidden" name="connectionId" value={c.id} />
              <button type="submit" className="button danger inline">
                {t("org.oidc.remove", { issuer: c.issuer })}
              </button>
            </Form>
          </li>
        ))}
      </ul>
      {data.verifiedDomains.length === 0 ? (
        <p>{t("org.oidc.noDomains")}</p>
      ) : (
        <Form method="post" reloadDocument id="org-oidc-form">
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="oidc-add" />
          <Field id="oidc-issuer" name="issuer" type="url" label={t("org.oidc.issuer")} required autoCapitalize="none" spellCheck={false} dir="ltr" />
          <Field id="oidc-client-id" name="clientId" label={t("org.oidc.clientId")} required autoCapitalize="none" spellCheck={false} autoComplete="off" dir="ltr" />
          <Field id="oidc-client-secret" name="clientSecret" type="password" label={t("org.oidc.clientSecret")} required autoComplete="new-password" dir="ltr" />
          <fieldset className="field">
            <legend>{t("org.oidc.domains")}</legend>
            {data.verifiedDomains.map((d) => (
              <label key={d} dir="ltr">
                <input type="checkbox" name={`domain:${d}`} defaultChecked={data.verifiedDomains.length === 1} /> {d}
              </label>
            ))}
          </fieldset>
          <div className="field">
            <label htmlFor="oidc-role">{t("org.oidc.role")}</label>
            <select id="oidc-role" name="defaultRole" defaultValue="member">
              <option value="member">{t("org.role.member")}</option>
              <option value="admin">{t("org.role.admin")}</option>
            </select>
          </div>
          <button type="submit" className="button">
            {t("org.oidc.add")}
          </button>
        </Form>
      )}
    </section>
  );
}
