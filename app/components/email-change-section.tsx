import { useEffect, useRef } from "react";
import { Form, useNavigation } from "react-router";
import { ACCOUNT_SECTION, ACCOUNT_FORM_ACTION } from "./account-sections";
import { MAX_EMAIL_ADDRESS_LENGTH } from "~/auth/core/email-address";
import { CsrfField, Field } from "./auth-forms";
import { Ltr } from "./ltr";
import { useT } from "~/i18n/react";

/**
 * /account: add or change the e-mail address. The address changes only once the link mailed to
 * the new address is used (app/auth/email/change.server.ts).
 */
export function EmailChangeSection({
  csrfToken,
  current,
  verified,
  available,
  sentTo,
  error,
}: {
  csrfToken: string;
  current: string | null;
  verified: boolean;
  available: boolean;
  sentTo: string | null;
  error: string | null;
}) {
  const t = useT();
  const navigation = useNavigation();
  const busy = navigation.state !== "idle" && navigation.formData?.get("intent") === "change-email";
  const title = current ? t("emailChange.changeTitle") : t("emailChange.addTitle");
  // The notice is this card's answer, rendered in place above the form the visitor just used: it
  // takes the focus, which scrolls it into view (ADR 114). Without JavaScript the new page's
  // autofocus does it; with it, React focuses only form fields by autoFocus, so the effect does.
  const sent = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (sentTo) sent.current?.focus();
  }, [sentTo]);
  return (
    <section className="card" aria-labelledby="email-change-heading" id={ACCOUNT_SECTION.email}>
      <h2 id="email-change-heading">{title}</h2>
      {sentTo ? (
        <p className="notice" role="status" id="email-change-sent" tabIndex={-1} autoFocus ref={sent}>
          {t.rich(current ? "emailChange.sentSwitch" : "emailChange.sentAdd", { address: <Ltr>{sentTo}</Ltr> })}
        </p>
      ) : null}
      {!available ? (
        <p className="muted">{t("emailChange.unavailable")}</p>
      ) : (
        <Form method="post" action={ACCOUNT_FORM_ACTION} id="email-change-form">
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="change-email" />
          {current && !verified ? (
            <p className="muted">{t("emailChange.notVerified")}</p>
          ) : null}
          <Field
            id="email-change-input"
            label={current ? t("emailChange.newLabel") : t("emailChange.label")}
            name="email"
            type="email"
            autoComplete="email"
            required
            maxLength={MAX_EMAIL_ADDRESS_LENGTH}
            error={error}
          />
          <button type="submit" className="button inline" aria-disabled={busy || undefined}>
            {busy ? t("common.sending") : t("emailChange.send")}
          </button>
        </Form>
      )}
    </section>
  );
}
