import { useEffect, useRef } from "react";
import { Form } from "react-router";
import { ACCOUNT_SECTION, ACCOUNT_FORM_ACTION } from "./account-sections";
import { CsrfField, Field } from "./auth-forms";
import { CopyButton } from "./copy-button";
import { useT } from "~/i18n/react";

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
  const t = useT();
  return (
    <svg
      className="qr-code"
      role="img"
      aria-label={t("twoFactor.qrLabel")}
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

/**
 * The setup key as people read and type it: groups of four ("ABCD EFGH …"). Authenticator apps
 * take it with or without the spaces; the Copy button copies it without them.
 */
function inGroups(secret: string): string {
  return secret.match(/.{1,4}/g)?.join(" ") ?? secret;
}

/** A code and a button; `danger` when the button turns something off. */
function CodeForm({ csrfToken, intent, id, label, button, error, danger }: { csrfToken: string; intent: string; id: string; label: string; button: string; error: string | null; danger?: boolean }) {
  return (
    <Form method="post" action={ACCOUNT_FORM_ACTION} id={`${id}-form`}>
      <CsrfField token={csrfToken} />
      <input type="hidden" name="intent" value={intent} />
      <Field id={id} label={label} name="code" type="text" inputMode="numeric" autoComplete="one-time-code" maxLength={64} required error={error} />
      <button type="submit" className={danger ? "button danger inline" : "button inline"}>
        {button}
      </button>
    </Form>
  );
}

/** /account: the TOTP second factor: turn it on, replace the recovery codes, turn it off. */
export function TwoFactorSection({ csrfToken, enabled, recoveryCodesLeft, setup, recoveryCodes, intent, codeError }: Props) {
  const t = useT();
  const errorFor = (name: string) => (intent === name ? codeError : null);
  // With JavaScript the answer renders in place without a page load, and React focuses only form
  // fields by `autoFocus`: the set-up or the codes are focused here, which scrolls to them.
  const answer = useRef<HTMLDivElement>(null);
  const shown = recoveryCodes ? recoveryCodes.join() : setup && !codeError ? setup.secret : null;
  useEffect(() => {
    if (shown) answer.current?.focus();
  }, [shown]);
  return (
    <section className="card" aria-labelledby="two-factor-heading" id={ACCOUNT_SECTION.twoFactor}>
      <h2 id="two-factor-heading">{t("twoFactor.title")}</h2>
      {recoveryCodes ? (
        // Shown in answer to a form of this card: focused, so the page opens here (ADR 114).
        <div id="recovery-codes" tabIndex={-1} autoFocus ref={answer}>
          <p role="status">{t.rich("twoFactor.saveCodes", { strong: (c) => <strong>{c}</strong> })}</p>
          <ul className="recovery-codes">
            {recoveryCodes.map((code) => (
              <li key={code}>
                <code data-recovery-code={code}>{code}</code>
              </li>
            ))}
          </ul>
          <CopyButton value={recoveryCodes.join("\n")} label={t("twoFactor.copyCodes")} />
        </div>
      ) : null}
      {enabled || (recoveryCodes && intent === "totp-confirm") ? (
        <>
          <p id="two-factor-status">
            {t("twoFactor.on")} {recoveryCodes ? null : t("twoFactor.codesLeft", { n: recoveryCodesLeft })}
          </p>
          <CodeForm csrfToken={csrfToken} intent="recovery-codes" id="recovery-codes-code" label={t("twoFactor.replaceLabel")} button={t("twoFactor.replaceButton")} error={errorFor("recovery-codes")} />
          <CodeForm csrfToken={csrfToken} intent="totp-disable" id="totp-disable-code" label={t("twoFactor.disableLabel")} button={t("twoFactor.disableButton")} error={errorFor("totp-disable")} danger />
        </>
      ) : setup ? (
        // The set-up opens here, unless a refused code's field takes the focus instead (ADR 114).
        <div id="totp-setup" tabIndex={-1} autoFocus={codeError ? undefined : true} ref={recoveryCodes ? undefined : answer}>
          <p>{t("twoFactor.scan")}</p>
          <QrCode qr={setup.qr} />
          <p>
            {t("twoFactor.setupKey")}{" "}
            <code className="setup-key" data-totp-secret={setup.secret}>
              {inGroups(setup.secret)}
            </code>
          </p>
          <CopyButton value={setup.secret} label={t("twoFactor.copyKey")} />
          <CodeForm csrfToken={csrfToken} intent="totp-confirm" id="totp-confirm-code" label={t("twoFactor.appCodeLabel")} button={t("twoFactor.turnOn")} error={errorFor("totp-confirm")} />
        </div>
      ) : (
        <>
          <p id="two-factor-status">{t("twoFactor.off")}</p>
          <Form method="post" action={ACCOUNT_FORM_ACTION} id="totp-start-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="intent" value="totp-start" />
            <button type="submit" className="button inline">
              {t("twoFactor.setUp")}
            </button>
          </Form>
        </>
      )}
    </section>
  );
}
