import { Form } from "react-router";
import { ACCOUNT_SECTION, accountAt, ACCOUNT_FORM_ACTION } from "./account-sections";
import { CsrfField, DocumentForm } from "./auth-forms";
import { useT } from "~/i18n/react";

type Props = {
  csrfToken: string;
  password: boolean;
  emailLink: boolean;
  linked: { provider: string; name: string; canUnlink: boolean }[];
  linkable: { id: string; name: string; signinUrl: string }[];
  notice: string | null;
};

/**
 * /account: every way the user can sign in. Linking another provider is its sign-in while signed
 * in; removing one is offered only while another way remains (the server checks again).
 */
export function LinkedAccountsSection({ csrfToken, password, emailLink, linked, linkable, notice }: Props) {
  const t = useT();
  return (
    <section className="card" aria-labelledby="methods-heading" id={ACCOUNT_SECTION.waysIn}>
      <h2 id="methods-heading">{t("methods.heading")}</h2>
      {notice ? (
        <p className="notice" role="status" id="linked-accounts-notice">
          {notice}
        </p>
      ) : null}
      <ul id="linked-accounts">
        {password ? <li>{t("methods.password")}</li> : null}
        {emailLink ? <li>{t("methods.emailLink")}</li> : null}
        {linked.map((a) => (
          <li key={a.provider} data-provider={a.provider}>
            <span>{a.name}</span>{" "}
            {a.canUnlink ? (
              <Form method="post" action={ACCOUNT_FORM_ACTION} className="inline-form">
                <CsrfField token={csrfToken} />
                <input type="hidden" name="intent" value="unlink-account" />
                <input type="hidden" name="provider" value={a.provider} />
                <button type="submit" className="button danger inline">
                  {t("methods.remove", { name: a.name })}
                </button>
              </Form>
            ) : (
              <span className="muted">{t("methods.onlyWay")}</span>
            )}
          </li>
        ))}
      </ul>
      {linkable.length ? (
        <div className="stack" id="link-accounts">
          {linkable.map((p) => (
            <DocumentForm key={p.id} inline action={p.signinUrl} label={t("methods.link", { name: p.name })} pendingLabel={t("signin.redirectingTo", { name: p.name })}>
              <CsrfField token={csrfToken} />
              <input type="hidden" name="callbackUrl" value={accountAt(ACCOUNT_SECTION.waysIn, { updated: "linked", provider: p.id })} />
            </DocumentForm>
          ))}
        </div>
      ) : null}
    </section>
  );
}
