import { Form } from "react-router";
import { useT, type Translate } from "~/i18n/react";
import { ACCOUNT_SECTION, ACCOUNT_FORM_ACTION } from "./account-sections";
import { CsrfField } from "./auth-forms";
import { useDescribeDevice } from "./device";
import { LocalTime } from "./local-time";
import { describeMethod, namesMethod } from "./sign-in-method";

type Props = {
  csrfToken: string;
  sessions: { id: string; current: boolean; userAgent: string | null; method: string | null; methodType: string | null; factors: string[]; createdAt: string; lastUsedAt: string }[];
};

/** What each recorded factor (the session's amr-like names) was, in the owner's words. */
const FACTOR_KEYS = { pwd: "factor.pwd", email: "factor.email", fed: "factor.fed", hwk: "factor.hwk", otp: "factor.otp", rcv: "factor.rcv" } as const;

/** "password + authenticator code", or null when the sign-in recorded none we can name. */
function describeFactors(t: Translate, factors: readonly string[]): string | null {
  const named = factors.filter((f): f is keyof typeof FACTOR_KEYS => Object.hasOwn(FACTOR_KEYS, f)).map((f) => t(FACTOR_KEYS[f]));
  return named.length ? named.join(" + ") : null;
}

/**
 * /account: where the user is signed in, whichever session strategy the site uses. Each device can be signed out; so can every other device, or all of them. Plain
 * forms: they work without JavaScript.
 */
export function SessionsSection({ csrfToken, sessions }: Props) {
  const t = useT();
  const describeDevice = useDescribeDevice();
  const others = sessions.some((s) => !s.current);
  return (
    <section className="card" aria-labelledby="sessions-heading" id={ACCOUNT_SECTION.sessions}>
      <h2 id="sessions-heading">{t("sessions.heading")}</h2>
      <ul className="sessions" id="sessions">
        {sessions.map((s) => (
          <li key={s.id} data-session-id={s.id} data-current={s.current || undefined}>
            <div>
              <div>
                {describeDevice(s.userAgent)} {s.current ? <span className="badge">{t("sessions.thisDevice")}</span> : null}
              </div>
              <div className="muted">
                {namesMethod(s.method, s.methodType)
                  ? t.rich("sessions.signedInWith", { method: describeMethod(t, s.methodType, s.method), created: <LocalTime value={s.createdAt} />, lastUsed: <LocalTime value={s.lastUsedAt} /> })
                  : t.rich("sessions.signedIn", { created: <LocalTime value={s.createdAt} />, lastUsed: <LocalTime value={s.lastUsedAt} /> })}
              </div>
              {describeFactors(t, s.factors) ? (
                <div className="muted" data-factors={s.factors.join(" ")}>
                  {t("sessions.provedWith", { factors: describeFactors(t, s.factors) })}
                </div>
              ) : null}
            </div>
            <Form method="post" action={ACCOUNT_FORM_ACTION}>
              <CsrfField token={csrfToken} />
              <input type="hidden" name="intent" value="revoke-session" />
              <input type="hidden" name="sessionId" value={s.id} />
              <button type="submit" className="button danger inline">
                {s.current ? t("sessions.signOutThis") : t("sessions.signOutThat")}
              </button>
            </Form>
          </li>
        ))}
      </ul>
      {others ? (
        <Form method="post" action={ACCOUNT_FORM_ACTION}>
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="revoke-others" />
          <button type="submit" className="button danger inline">
            {t("sessions.signOutOthers")}
          </button>
        </Form>
      ) : null}
      <Form method="post" action={ACCOUNT_FORM_ACTION}>
        <CsrfField token={csrfToken} />
        <input type="hidden" name="intent" value="revoke-all" />
        <button type="submit" className="button danger inline">
          {t("sessions.signOutAll")}
        </button>
      </Form>
    </section>
  );
}
