import { Form, useNavigation } from "react-router";
import { MAX_EMAIL_ADDRESS_LENGTH } from "~/auth/core/email-address";
import { CsrfField, Field } from "./auth-forms";

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
  const navigation = useNavigation();
  const busy = navigation.state !== "idle" && navigation.formData?.get("intent") === "change-email";
  const title = current ? "Change your e-mail address" : "Add an e-mail address";
  return (
    <section className="card" aria-labelledby="email-change-heading">
      <h2 id="email-change-heading">{title}</h2>
      {sentTo ? (
        <p className="notice" role="status" id="email-change-sent">
          We sent a link to {sentTo}. Open it to {current ? "switch to" : "add"} that address; until then nothing changes.
        </p>
      ) : null}
      {!available ? (
        <p className="muted">E-mail cannot be sent from this server, so the address cannot be changed here.</p>
      ) : (
        <Form method="post" id="email-change-form">
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="change-email" />
          {current && !verified ? (
            <p className="muted">Your current address is not verified yet: enter it to get a link that verifies it.</p>
          ) : null}
          <Field
            id="email-change-input"
            label={current ? "New e-mail address" : "E-mail address"}
            name="email"
            type="email"
            autoComplete="email"
            required
            maxLength={MAX_EMAIL_ADDRESS_LENGTH}
            error={error}
          />
          <button type="submit" className="button inline" aria-disabled={busy || undefined}>
            {busy ? "Sending…" : "Send me a link"}
          </button>
        </Form>
      )}
    </section>
  );
}
