import { Form } from "react-router";
import { CsrfField, Field } from "./auth-forms";

type Setup = { secret: string; uri: string; qr: { size: number; path: string } };

type Props = {
  csrfToken: string;
  enabled: boolean;
  recoveryCodesLeft: number;
  /** totp-start's answer (or a refused confirmation's): the secret to add to an app. */
  setup: Setup | null;
  /** Recovery codes just created: shown in this one answer, never again. */
  recoveryCodes: string[] | null;
  /** The intent the refusal below is about. */
  intent: string | null;
  codeError: string | null;
};

/** The otpauth URI as a QR code the server drew (no script, no image request). */
function QrCode({ qr }: { qr: Setup["qr"] }) {
  return (
    <svg
      className="qr-code"
      role="img"
      aria-label="QR code of the setup key"
      viewBox={`0 0 ${qr.size} ${qr.size}`}
      width={qr.size * 5}
      height={qr.size * 5}
      shapeRendering="crispEdges"
    >
      <rect width={qr.size} height={qr.size} fill="#fff" />
      <path d={qr.path} fill="#000" />
    </svg>
  );
}

function CodeForm({ csrfToken, intent, id, label, button, error }: { csrfToken: string; intent: string; id: string; label: string; button: string; error: string | null }) {
  return (
    <Form method="post" id={`${id}-form`}>
      <CsrfField token={csrfToken} />
      <input type="hidden" name="intent" value={intent} />
      <Field id={id} label={label} name="code" type="text" inputMode="numeric" autoComplete="one-time-code" maxLength={64} required error={error} />
      <button type="submit" className="button inline">
        {button}
      </button>
    </Form>
  );
}

/** /account: the TOTP second factor (contract §11, §13): turn it on, replace the recovery codes, turn it off. */
export function TwoFactorSection({ csrfToken, enabled, recoveryCodesLeft, setup, recoveryCodes, intent, codeError }: Props) {
  const errorFor = (name: string) => (intent === name ? codeError : null);
  return (
    <section className="card" aria-labelledby="two-factor-heading" id="two-factor">
      <h2 id="two-factor-heading">Two-step verification</h2>
      {recoveryCodes ? (
        <div id="recovery-codes">
          <p role="status">
            <strong>Save these recovery codes now.</strong> Each works once, when your authenticator app is not at hand. They are not
            shown again.
          </p>
          <ul className="recovery-codes">
            {recoveryCodes.map((code) => (
              <li key={code}>
                <code data-recovery-code={code}>{code}</code>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {enabled || (recoveryCodes && intent === "totp-confirm") ? (
        <>
          <p id="two-factor-status">
            On: signing in with a password, an e-mail link or another provider also asks for a code from your authenticator app.{" "}
            {recoveryCodes ? null : `${recoveryCodesLeft} recovery ${recoveryCodesLeft === 1 ? "code" : "codes"} left.`}
          </p>
          <CodeForm csrfToken={csrfToken} intent="recovery-codes" id="recovery-codes-code" label="Current code (for new recovery codes)" button="Replace recovery codes" error={errorFor("recovery-codes")} />
          <CodeForm csrfToken={csrfToken} intent="totp-disable" id="totp-disable-code" label="Current code (to turn it off)" button="Turn off two-step verification" error={errorFor("totp-disable")} />
        </>
      ) : setup ? (
        <div id="totp-setup">
          <p>Scan this QR code with your authenticator app, or enter the setup key by hand.</p>
          <QrCode qr={setup.qr} />
          <p>
            Setup key: <code data-totp-secret={setup.secret}>{setup.secret}</code>
          </p>
          <CodeForm csrfToken={csrfToken} intent="totp-confirm" id="totp-confirm-code" label="Code from the app" button="Turn on" error={errorFor("totp-confirm")} />
        </div>
      ) : (
        <>
          <p id="two-factor-status">Off: a password, an e-mail link or another provider alone signs you in.</p>
          <Form method="post" id="totp-start-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="intent" value="totp-start" />
            <button type="submit" className="button inline">
              Set up an authenticator app
            </button>
          </Form>
        </>
      )}
    </section>
  );
}
