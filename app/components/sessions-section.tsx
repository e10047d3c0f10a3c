import { Form } from "react-router";
import { CsrfField } from "./auth-forms";
import { describeDevice } from "./device";

type Props = {
  csrfToken: string;
  sessions: { id: string; current: boolean; userAgent: string | null; method: string | null; factors: string[]; createdAt: string; lastUsedAt: string }[];
};

/** What each recorded factor (the session's amr-like names) was, in the owner's words. */
const FACTOR_LABELS: Readonly<Record<string, string>> = {
  pwd: "password",
  email: "e-mail link",
  fed: "another site's sign-in",
  hwk: "passkey",
  otp: "authenticator code",
  rcv: "recovery code",
};

/** "password + authenticator code", or null when the sign-in recorded none we can name. */
function describeFactors(factors: readonly string[]): string | null {
  const named = factors.map((f) => FACTOR_LABELS[f]).filter((label): label is string => Boolean(label));
  return named.length ? named.join(" + ") : null;
}

/**
 * /account: where the user is signed in, whichever session strategy the site uses (contract
 * section 11). Each device can be signed out; so can every other device, or all of them. Plain
 * forms: they work without JavaScript.
 */
export function SessionsSection({ csrfToken, sessions }: Props) {
  const others = sessions.some((s) => !s.current);
  return (
    <section className="card" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Where you are signed in</h2>
      <ul className="sessions" id="sessions">
        {sessions.map((s) => (
          <li key={s.id} data-session-id={s.id} data-current={s.current || undefined}>
            <div>
              <div>
                {describeDevice(s.userAgent)} {s.current ? <span className="badge">This device</span> : null}
              </div>
              <div className="muted">
                {s.method ? `Signed in with ${s.method}, ` : "Signed in "}
                {new Date(s.createdAt).toUTCString()} · last used {new Date(s.lastUsedAt).toUTCString()}
              </div>
              {describeFactors(s.factors) ? (
                <div className="muted" data-factors={s.factors.join(" ")}>
                  Proved with {describeFactors(s.factors)}
                </div>
              ) : null}
            </div>
            <Form method="post">
              <CsrfField token={csrfToken} />
              <input type="hidden" name="intent" value="revoke-session" />
              <input type="hidden" name="sessionId" value={s.id} />
              <button type="submit" className="button secondary inline">
                Sign out of {s.current ? "this device" : "that device"}
              </button>
            </Form>
          </li>
        ))}
      </ul>
      {others ? (
        <Form method="post">
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="revoke-others" />
          <button type="submit" className="button secondary inline">
            Sign out of every other device
          </button>
        </Form>
      ) : null}
      <Form method="post">
        <CsrfField token={csrfToken} />
        <input type="hidden" name="intent" value="revoke-all" />
        <button type="submit" className="button danger inline">
          Sign out everywhere
        </button>
      </Form>
    </section>
  );
}
