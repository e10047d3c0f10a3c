// The "SAML sign-in" section of /orgs/<slug> (docs/features/saml.md): the connections with their
// URLs, certificates (add and remove, for a rotation) and the IdP-initiated switch, and the form
// that adds one from the IdP's metadata (URL or XML) or from typed fields. Plain forms: no
// JavaScript needed.
import { Form } from "react-router";
import { useT } from "~/i18n/react";
import { CsrfField, Field } from "./auth-forms";
import { LocalTime } from "./local-time";
import { IntentForm } from "./intent-form";

export type SamlCertificate = { fingerprint: string; subject: string; notAfter: string | null };
export type SamlConnection = {
  id: string;
  idpEntityId: string;
  ssoUrl: string;
  domains: string;
  allowIdpInitiated: boolean;
  certificates: SamlCertificate[];
  metadataUrl: string;
  acsUrl: string;
  signinUrl: string;
};


function ConnectionItem({ csrfToken, c }: { csrfToken: string; c: SamlConnection }) {
  const t = useT();
  const last = c.certificates.length <= 1;
  return (
    <li data-connection={c.id}>
      <div>
        <strong dir="ltr">{c.idpEntityId}</strong>
        <dl className="profile">
          <dt>{t("org.saml.domains")}</dt>
          <dd dir="ltr">{c.domains}</dd>
          <dt>{t("org.saml.ssoUrl")}</dt>
          <dd dir="ltr">
            <code>{c.ssoUrl}</code>
          </dd>
          <dt>{t("org.saml.metadata")}</dt>
          <dd dir="ltr">
            <code>{c.metadataUrl}</code>
          </dd>
          <dt>{t("org.saml.acs")}</dt>
          <dd dir="ltr">
            <code>{c.acsUrl}</code>
          </dd>
          <dt>{t("org.saml.signin")}</dt>
          <dd dir="ltr">
            <code>{c.signinUrl}</code>
          </dd>
        </dl>
        <h3>{t("org.saml.certificateList")}</h3>
        <ul className="sessions" data-certificates={c.id}>
          {c.certificates.map((cert) => (
            <li key={cert.fingerprint} data-fingerprint={cert.fingerprint}>
              <div>
                <code dir="ltr">{cert.fingerprint}</code>
                <div className="muted" dir="ltr">
                  {cert.subject}
                </div>
                {cert.notAfter ? <div className="muted">{t.rich("org.saml.certificateUntil", { date: <LocalTime value={cert.notAfter} /> })}</div> : null}
              </div>
              {last ? null : <IntentForm csrfToken={csrfToken} intent="saml-certificate-remove" fields={{ connectionId: c.id, fingerprint: cert.fingerprint }} label={t("org.saml.certificateRemove")} danger />}
            </li>
          ))}
        </ul>
        {last ? <p className="muted">{t("org.saml.certificateLastNote")}</p> : null}
        <Form method="post" reloadDocument>
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="saml-certificate-add" />
          <input type="hidden" name="connectionId" value={c.id} />
          <div className="field">
            <label htmlFor={`saml-new-cert-${c.id}`}>{t("org.saml.certificateNew")}</label>
            <textarea id={`saml-new-cert-${c.id}`} name="certificate" required rows={4} dir="ltr" spellCheck={false} />
          </div>
          <button type="submit" className="button secondary inline">
            {t("org.saml.certificateAdd")}
          </button>
        </Form>
        <p className="muted">{c.allowIdpInitiated ? t("org.saml.idpInitiatedOn") : t("org.saml.idpInitiatedOff")}</p>
        <IntentForm
          csrfToken={csrfToken}
          intent="saml-idp-initiated"
          fields={{ connectionId: c.id, enabled: c.allowIdpInitiated ? "off" : "on" }}
          label={c.allowIdpInitiated ? t("org.saml.idpInitiatedTurnOff") : t("org.saml.idpInitiatedTurnOn")}
        />
      </div>
      <IntentForm csrfToken={csrfToken} intent="saml-remove" fields={{ connectionId: c.id }} label={t("org.saml.remove", { entity: c.idpEntityId })} danger />
    </li>
  );
}

export function SamlSection({ csrfToken, connections }: { csrfToken: string; connections: SamlConnection[] }) {
  const t = useT();
  return (
    <section className="card" aria-labelledby="saml-heading">
      <h2 id="saml-heading">{t("org.saml.title")}</h2>
      <p>{t("org.saml.intro")}</p>
      {connections.length === 0 ? <p>{t("org.saml.none")}</p> : null}
      <ul className="sessions" id="saml-connections">
        {connections.map((c) => (
          <ConnectionItem key={c.id} csrfToken={csrfToken} c={c} />
        ))}
      </ul>
      <Form method="post" reloadDocument id="org-saml-form">
        <CsrfField token={csrfToken} />
        <input type="hidden" name="intent" value="saml-add" />
        <p>{t("org.saml.metadataHint")}</p>
        <Field id="saml-metadata-url" name="metadataUrl" type="url" label={t("org.saml.metadataUrl")} dir="ltr" />
        <div className="field">
          <label htmlFor="saml-metadata-xml">{t("org.saml.metadataXml")}</label>
          <textarea id="saml-metadata-xml" name="metadataXml" rows={6} dir="ltr" spellCheck={false} />
        </div>
        <p>{t("org.saml.manualHint")}</p>
        <Field id="saml-entity" name="idpEntityId" label={t("org.saml.entityId")} autoCapitalize="none" spellCheck={false} dir="ltr" />
        <Field id="saml-sso" name="ssoUrl" type="url" label={t("org.saml.ssoUrl")} dir="ltr" />
        <div className="field">
          <label htmlFor="saml-certificates">{t("org.saml.certificates")}</label>
          <textarea id="saml-certificates" name="certificates" rows={6} dir="ltr" spellCheck={false} />
        </div>
        <Field id="saml-domains" name="domains" label={t("org.saml.domains")} required autoCapitalize="none" spellCheck={false} dir="ltr" />
        <Field id="saml-email-attribute" name="emailAttribute" label={t("org.saml.emailAttribute")} autoCapitalize="none" spellCheck={false} dir="ltr" />
        <Field id="saml-name-attribute" name="nameAttribute" label={t("org.saml.nameAttribute")} autoCapitalize="none" spellCheck={false} dir="ltr" />
        <div className="field">
          <label>
            <input type="checkbox" name="idpInitiated" /> {t("org.saml.idpInitiated")}
          </label>
        </div>
        <button type="submit" className="button">
          {t("org.saml.add")}
        </button>
      </Form>
    </section>
  );
}
