import { data } from "react-router";
import { optionalSession } from "~/auth/core";
import { pageTitle, SITE_NAME } from "~/site";
import type { Route } from "./+types/home";

export const meta: Route.MetaFunction = () => [{ title: pageTitle() }];

export async function loader({ request }: Route.LoaderArgs) {
  const { session, headers } = await optionalSession(request);
  return data({ session: session?.data ?? null }, { headers });
}

export default function Home({ loaderData }: Route.ComponentProps) {
  const { session } = loaderData;
  return (
    <main>
      <section className="card">
        <h1>{SITE_NAME}</h1>
        {session ? (
          <>
            <p id="session-status">
              Signed in as <strong>{session.user.name ?? session.user.email}</strong>
              {session.user.name && session.user.email ? <> ({session.user.email})</> : null}.
            </p>
            <p className="muted">Your session lasts until {new Date(session.expires).toUTCString()}.</p>
            <p>
              <a href="/account">Your account</a> · <a href="/auth/signout">Sign out</a>
            </p>
          </>
        ) : (
          <>
            <p id="session-status">You are not signed in.</p>
            <a className="button inline" href="/auth/signin">
              Sign in
            </a>
          </>
        )}
      </section>
    </main>
  );
}
