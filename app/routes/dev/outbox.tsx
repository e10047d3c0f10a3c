import { data, useLoaderData, type MetaFunction } from "react-router";
import { getConfig } from "~/auth/core";
import { LocalTime } from "~/components/local-time";
import { useT } from "~/i18n/react";
import { PageTitle } from "~/components/site-name";
import { listOutbox, outboxDir } from "~/mail/outbox.server";

// Development only: app/routes.ts mounts this route only outside production builds, and the
// loader answers 404 if it is ever reached with a production configuration anyway. No
// ./+types import: `react-router typegen` defaults to NODE_ENV=production, so it never sees this
// route and generates no types for it.

export const meta: MetaFunction = () => [{ name: "robots", content: "noindex" }];

export async function loader() {
  const config = getConfig();
  if (config.production) throw data("Not found", { status: 404 });
  const messages = await listOutbox(config.dataDir);
  return data(
    { smtp: config.email !== null, folder: outboxDir(config.dataDir), messages },
    { headers: { "Cache-Control": "no-store" } },
  );
}

export default function DevOutbox() {
  const t = useT();
  const { smtp, folder, messages } = useLoaderData<typeof loader>();
  return (
    <main>
      <PageTitle page={t("outbox.title")} />
      <section className="card" aria-labelledby="outbox-heading">
        <h1 id="outbox-heading">{t("outbox.title")}</h1>
        <p className="muted">{smtp ? t("outbox.smtp") : t("outbox.kept", { folder })}</p>
        {messages.length === 0 ? <p>{t.rich("outbox.empty", { link: (c) => <a href="/auth/signin">{c}</a> })}</p> : null}
      </section>
      {messages.map((m) => (
        <article key={m.id} className="card outbox-message" aria-labelledby={`m-${m.id}`}>
          <h2 id={`m-${m.id}`}>{m.subject}</h2>
          <dl className="profile">
            <dt>{t("outbox.to")}</dt>
            <dd className="outbox-to">{m.to}</dd>
            <dt>{t("outbox.sent")}</dt>
            <dd>
              <LocalTime value={m.sentAt} />
            </dd>
          </dl>
          {m.code ? (
            <p>
              {t("outbox.code")} <strong className="outbox-code">{m.code}</strong>
            </p>
          ) : null}
          {m.link ? (
            <p>
              <a className="button inline outbox-link" href={m.link}>
                {t("outbox.open")}
              </a>
            </p>
          ) : null}
          <details>
            <summary>{t("outbox.plain")}</summary>
            <pre style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>{m.text}</pre>
          </details>
          <details>
            <summary>{t("outbox.html")}</summary>
            {/* An empty sandbox: no scripts, no forms, no navigation from the message itself. */}
            <iframe title={t("outbox.htmlFrame", { subject: m.subject })} sandbox="" srcDoc={m.html} style={{ width: "100%", height: "28rem", border: "1px solid var(--border)" }} />
          </details>
        </article>
      ))}
    </main>
  );
}
