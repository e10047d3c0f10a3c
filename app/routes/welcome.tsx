import { data } from "react-router";
import { ensureCsrfToken, headersWith, requireSession, toRelative, validateCallbackUrl } from "~/auth/core";
import { listPasskeys } from "~/auth/passkeys";
import { getProviders } from "~/auth/signin";
import { AddPasskeyButton } from "~/components/passkeys-section";
import { pageTitle } from "~/site";
import type { Route } from "./+types/welcome";

export const meta: Route.MetaFunction = () => [{ title: pageTitle("Welcome") }];

export async function loader({ request }: Route.LoaderArgs) {
  const { ar, session, setCookies } = await requireSession(request);
  const next = validateCallbackUrl(ar.url.searchParams.get("callbackUrl"), ar.origin) ?? `${ar.origin}/`;
  const csrf = ensureCsrfToken(ar);
  // A new account, just signed in: the moment to offer a passkey for next time (once: this page
  // is shown after the sign-in that created the account).
  const offerPasskey = getProviders(ar.config).some((p) => p.type === "webauthn") && (await listPasskeys(session.userId)).length === 0;
  return data(
    { user: session.data.user, next: toRelative(next), csrfToken: csrf.token, offerPasskey },
    { headers: headersWith([csrf.setCookie, ...setCookies]) },
  );
}

export default function Welcome({ loaderData }: Route.ComponentProps) {
  const { user, next, csrfToken, offerPasskey } = loaderData;
  return (
    <main>
      <section className="card">
        <h1>Welcome{user.name ? `, ${user.name}` : ""}!</h1>
        <p>Your account has been created{user.email ? <> for <strong>{user.email}</strong></> : null}.</p>
        <p>You can add your name and manage where you are signed in from your account page.</p>
        {offerPasskey ? (
          <div id="passkey-offer">
            <h2>Add a passkey for next time</h2>
            <p>Sign in with your fingerprint, face or screen lock instead of an e-mail link or password.</p>
            <AddPasskeyButton csrfToken={csrfToken} label="Add a passkey for next time" callbackUrl={next} />
          </div>
        ) : null}
        <p>
          <a className="button inline" href={next}>
            Continue
          </a>{" "}
          <a href="/account">Go to your account</a>
        </p>
      </section>
    </main>
  );
}
