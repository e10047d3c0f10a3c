import { data } from "react-router";
import { headersWith, requireSession, toRelative, validateCallbackUrl } from "~/auth/core";
import { pageTitle } from "~/site";
import type { Route } from "./+types/welcome";

export const meta: Route.MetaFunction = () => [{ title: pageTitle("Welcome") }];

export async function loader({ request }: Route.LoaderArgs) {
  const { ar, session, setCookies } = await requireSession(request);
  const next = validateCallbackUrl(ar.url.searchParams.get("callbackUrl"), ar.origin) ?? `${ar.origin}/`;
  return data({ user: session.data.user, next: toRelative(next) }, { headers: headersWith(setCookies) });
}

export default function Welcome({ loaderData }: Route.ComponentProps) {
  const { user, next } = loaderData;
  return (
    <main>
      <section className="card">
        <h1>Welcome{user.name ? `, ${user.name}` : ""}!</h1>
        <p>Your account has been created{user.email ? <> for <strong>{user.email}</strong></> : null}.</p>
        <p>You can add your name and manage where you are signed in from your account page.</p>
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
