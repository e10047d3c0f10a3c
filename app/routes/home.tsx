import { data } from "react-router";
import { getSession } from "~/auth";
import { LocalTime } from "~/components/local-time";
import { Ltr } from "~/components/ltr";
import { PageTitle, useSiteName } from "~/components/site-name";
import type { Route } from "./+types/home";
import { useT } from "~/i18n/react";

export async function loader({ request }: Route.LoaderArgs) {
  const { session, headers } = await getSession(request);
  // Where /account sends a user who deleted their account (ADR 086).
  const deleted = !session && new URL(request.url).searchParams.get("deleted") === "account";
  return data({ session: session ? { user: session.user, expires: session.expires } : null, deleted }, { headers });
}

export default function Home({ loaderData }: Route.ComponentProps) {
  const t = useT();
  const siteName = useSiteName();
  const { session, deleted } = loaderData;
  return (
    <main>
      <PageTitle />
      <section className="card">
        <h1>{siteName}</h1>
        {session ? (
          <>
            <p id="session-status">
              {t.rich("home.signedInAs", {
                // Each reads in its own direction inside the sentence (an Arabic page, "Leila Smith",
                // a Latin address): the name isolated, the address as the left-to-right fragment it is.
                name: session.user.name ? <bdi>{session.user.name}</bdi> : <Ltr>{session.user.email ?? ""}</Ltr>,
                email: session.user.name && session.user.email ? t.rich("home.signedInEmail", { email: <Ltr>{session.user.email}</Ltr> }) : "",
                strong: (c) => <strong>{c}</strong>,
              })}
            </p>
            <p className="muted">{t.rich("home.sessionUntil", { time: <LocalTime value={session.expires} /> })}</p>
            <p>
              <a href="/account">{t("home.yourAccount")}</a> · <a href="/auth/signout">{t("home.signOut")}</a>
            </p>
          </>
        ) : (
          <>
            {deleted ? (
              <p className="notice" role="status" id="account-deleted">
                {t("home.accountDeleted")}
              </p>
            ) : null}
            <p id="session-status">{t("home.notSignedIn")}</p>
            <a className="button inline" href="/auth/signin">
              {t("home.signIn")}
            </a>
          </>
        )}
      </section>
    </main>
  );
}
