import { data } from "react-router";
import { ensureCsrfToken, headersWith, requireSession, toRelative, validateCallbackUrl } from "~/auth/core";
import { listPasskeys } from "~/auth/passkeys";
import { getProviders } from "~/auth/signin";
import { AddPasskeyButton } from "~/components/passkeys-section";
import { PageTitle } from "~/components/site-name";
import type { Route } from "./+types/welcome";
import { useT } from "~/i18n/react";
import { createdJustNow, welcomeWords } from "./welcome.server";
import { Ltr } from "~/components/ltr";

export async function loader({ request }: Route.LoaderArgs) {
  const { ar, session, setCookies } = await requireSession(request);
  const next = validateCallbackUrl(ar.url.searchParams.get("callbackUrl"), ar.origin) ?? `${ar.origin}/`;
  const csrf = ensureCsrfToken(ar);
  // A new account, just signed in: the moment to offer a passkey for next time (once: this page
  // is shown after the sign-in that created the account).
  const offerPasskey = getProviders(ar.config).some((p) => p.type === "webauthn") && (await listPasskeys(session.userId)).length === 0;
  const words = await welcomeWords(ar, session.userId, Boolean(session.data.user.name));
  const justCreated = await createdJustNow(session.userId);
  return data(
    { user: session.data.user, next: toRelative(next), csrfToken: csrf.token, offerPasskey, words, justCreated },
    { headers: headersWith([csrf.setCookie, ...setCookies]) },
  );
}

export default function Welcome({ loaderData }: Route.ComponentProps) {
  const t = useT();
  const { user, next, csrfToken, offerPasskey, words, justCreated } = loaderData;
  return (
    <main>
      <PageTitle page={t("welcome.title")} />
      <section className="card">
        <h1>{user.name ? t("welcome.headingNamed", { name: user.name }) : t("welcome.heading")}</h1>
        {/* "Created" only right after the sign-in that created it; a later visit reads the next steps alone. */}
        {justCreated ? (
          <p id="welcome-created">{user.email ? t.rich("welcome.createdFor", { email: <Ltr>{user.email}</Ltr>, strong: (c) => <strong>{c}</strong> }) : t("welcome.created")}</p>
        ) : null}
        <p>{words.manage}</p>
        {offerPasskey ? (
          <div id="passkey-offer">
            <h2>{t("passkey.addForNextTime")}</h2>
            <p>{words.passkeyText}</p>
            <AddPasskeyButton csrfToken={csrfToken} label={t("passkey.addForNextTime")} callbackUrl={next} />
          </div>
        ) : null}
        <p className="actions">
          <a className="button inline" href={next}>
            {t("common.continue")}
          </a>
          <a href="/account">{t("common.accountLink")}</a>
        </p>
      </section>
    </main>
  );
}
