// A documented example for developers building pages on Vestibule (docs/app-pages.md): who is
// signed in, read two ways. useSession() from ~/auth/react reads the root loader's session (no
// request, right from the server's HTML); next-auth/react's useSession() under
// <SessionProvider basePath="/auth"> asks GET /auth/session, as a next-auth/react client does.
// Only under `npm run dev` and in a build made with VESTIBULE_EXAMPLES=1 (app/routes.ts).
import { SessionProvider, useSession as useNextAuthSession } from "next-auth/react";
import { useSession } from "~/auth/react";
import { useT } from "~/i18n/react";
import { PageTitle } from "~/components/site-name";

function NextAuthSession() {
  const t = useT();
  const { data, status } = useNextAuthSession();
  return <p id="next-auth-session">{status === "loading" ? t("example.session.loading") : data?.user?.email ? t("example.session.signedInAs", { address: data.user.email }) : t("example.session.signedOut")}</p>;
}

export default function SessionExample() {
  const t = useT();
  const { data } = useSession();
  return (
    <main>
      <PageTitle page={t("example.session.title")} />
      <section className="card">
        <h1>{t("example.session.title")}</h1>
        <h2>{t("example.session.fromPage")}</h2>
        <p id="app-session">{data?.user.email ? t("example.session.signedInAs", { address: data.user.email }) : t("example.session.signedOut")}</p>
        <h2>{t("example.session.fromNextAuth")}</h2>
        <SessionProvider basePath="/auth">
          <NextAuthSession />
        </SessionProvider>
      </section>
    </main>
  );
}
