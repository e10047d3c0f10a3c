import { data, Form, useNavigation } from "react-router";
import { CsrfField, Field } from "~/components/auth-forms";
import { EmailChangeSection } from "~/components/email-change-section";
import { LinkedAccountsSection } from "~/components/linked-accounts-section";
import { pageTitle } from "~/site";
import type { Route } from "./+types/account";
import { accountAction, accountPageData } from "./account.server";

export const meta: Route.MetaFunction = () => [{ title: pageTitle("Your account") }];

export async function loader({ request }: Route.LoaderArgs) {
  const page = await accountPageData(request);
  return data(page.data, { headers: page.headers });
}

export const action = ({ request }: Route.ActionArgs) => accountAction(request);

function describeDevice(userAgent: string | null) {
  if (!userAgent) return "Unknown device";
  const browser = /Firefox\//.test(userAgent) ? "Firefox" : /Edg\//.test(userAgent) ? "Edge" : /Chrom(e|ium)\//.test(userAgent) ? "Chrome" : /Safari\//.test(userAgent) ? "Safari" : null;
  const os = /Windows/.test(userAgent) ? "Windows" : /Mac OS X/.test(userAgent) ? "macOS" : /Android/.test(userAgent) ? "Android" : /iPhone|iPad/.test(userAgent) ? "iOS" : /Linux/.test(userAgent) ? "Linux" : null;
  return [browser, os].filter(Boolean).join(" on ") || userAgent.slice(0, 60);
}

export default function Account({ loaderData, actionData }: Route.ComponentProps) {
  const { csrfToken, profile, sessions, strategy, notice, emailChange, ways } = loaderData;
  const navigation = useNavigation();
  const busy = (intent: string) => navigation.state !== "idle" && navigation.formData?.get("intent") === intent;
  const nameError = actionData?.fieldErrors && "name" in actionData.fieldErrors ? String(actionData.fieldErrors.name) : null;

  return (
    <main>
      <h1>Your account</h1>
      {notice ? (
        <p className="notice" role="status">
          {notice}
        </p>
      ) : null}
      {actionData?.formError ? (
        <p className="alert" role="alert">
          {actionData.formError}
        </p>
      ) : null}

      <section className="card" aria-labelledby="profile-heading">
        <h2 id="profile-heading">Profile</h2>
        <dl className="profile">
          <dt>Email</dt>
          <dd id="profile-email">
            {profile.email ?? "none"} {profile.email ? (profile.emailVerified ? "(verified)" : "(not verified)") : null}
          </dd>
          <dt>Name</dt>
          <dd id="profile-name">{profile.name ?? "not set"}</dd>
          <dt>Member since</dt>
          <dd>{new Date(profile.memberSince).toUTCString()}</dd>
        </dl>
        <Form method="post" id="profile-form">
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="update-profile" />
          <Field id="profile-name-input" label="Display name" name="name" type="text" defaultValue={profile.name ?? ""} maxLength={100} required autoComplete="name" error={nameError} />
          <button type="submit" className="button inline" aria-disabled={busy("update-profile") || undefined}>
            {busy("update-profile") ? "Saving…" : "Save name"}
          </button>
        </Form>
      </section>

      <EmailChangeSection
        csrfToken={csrfToken}
        current={profile.email}
        verified={profile.emailVerified !== null}
        available={emailChange.available}
        sentTo={actionData && "emailSentTo" in actionData ? actionData.emailSentTo : null}
        error={actionData?.fieldErrors && "email" in actionData.fieldErrors ? String(actionData.fieldErrors.email) : null}
      />

      <LinkedAccountsSection csrfToken={csrfToken} {...ways} />

      <section className="card" aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Where you are signed in</h2>
        {strategy === "database" ? (
          <>
            <ul className="sessions">
              {sessions.map((s) => (
                <li key={s.id}>
                  <div>
                    <div>
                      {describeDevice(s.userAgent)} {s.current ? <span className="badge">This device</span> : null}
                    </div>
                    <div className="muted">Last used {new Date(s.lastUsedAt).toUTCString()}</div>
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
          </>
        ) : (
          <p className="muted">
            Sessions are stateless encrypted cookies (AUTH_SESSION_STRATEGY=jwt): there is no list of devices to show, and
            only the session on this device can be ended from here.
          </p>
        )}
        <Form method="post">
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="revoke-all" />
          <button type="submit" className="button danger inline">
            {strategy === "database" ? "Sign out everywhere" : "Sign out of this device"}
          </button>
        </Form>
      </section>
    </main>
  );
}
