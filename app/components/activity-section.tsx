import { describeDevice } from "./device";

type Props = {
  events: { id: string; type: string; at: string; ip: string | null; userAgent: string | null; method: string | null }[];
};

/** What each AuthEvent type reads as on /account. */
const EVENT_LABELS: Record<string, string> = {
  signin: "Signed in",
  "signin-failed": "Failed sign-in",
  signout: "Signed out",
  "session-revoked": "Session ended",
  "session-update": "Profile changed",
  "user-created": "Account created",
  "account-linked": "Account linked",
  "account-unlinked": "Account unlinked",
  "email-sent": "E-mail sent",
  "email-changed": "E-mail address changed",
  "rate-limited": "Rate limited",
  "passkey-added": "Passkey added",
  "passkey-removed": "Passkey removed",
  "passkey-renamed": "Passkey renamed",
  "two-factor-enabled": "Second factor turned on",
  "two-factor-disabled": "Second factor turned off",
  "two-factor-failed": "Wrong second-factor code",
  "recovery-code-used": "Recovery code used",
  "recovery-codes-replaced": "Recovery codes replaced",
  "password-set": "Password set",
  "password-changed": "Password changed",
  "password-removed": "Password removed",
  "password-reset": "Password reset",
  "role-changed": "Role changed",
  "user-disabled": "Account disabled",
  "user-enabled": "Account enabled",
  "sessions-ended": "Sessions ended by an administrator",
};

/** /account: the user's latest auth events (contract section 11). */
export function ActivitySection({ events }: Props) {
  return (
    <section className="card" aria-labelledby="activity-heading">
      <h2 id="activity-heading">Recent activity</h2>
      {events.length === 0 ? (
        <p className="muted">No activity yet.</p>
      ) : (
        <table id="activity">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Event</th>
              <th scope="col">Device</th>
              <th scope="col">Address</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr key={e.id} data-event={e.type}>
                <td>{new Date(e.at).toUTCString()}</td>
                <td>
                  {EVENT_LABELS[e.type] ?? e.type}
                  {e.method ? ` (${e.method})` : ""}
                </td>
                <td>{describeDevice(e.userAgent)}</td>
                <td>{e.ip ?? "unknown"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
