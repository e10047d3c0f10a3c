import { data, useLoaderData, type MetaFunction } from "react-router";
import { getConfig } from "~/auth/core";
import { listOutbox, outboxDir } from "~/mail/outbox.server";

// Development only: app/routes.ts mounts this route only outside production builds, and the
// loader answers 404 if it is ever reached with a production configuration anyway. No
// ./+types import: `react-router typegen` defaults to NODE_ENV=production, so it never sees this
// route and generates no types for it.

export const meta: MetaFunction = () => [{ title: "Dev outbox · Vestibule" }, { name: "robots", content: "noindex" }];

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
  const { smtp, folder, messages } = useLoaderData<typeof loader>();
  return (
    <main>
      <section className="card" aria-labelledby="outbox-heading">
        <h1 id="outbox-heading">Dev outbox</h1>
        <p className="muted">
          {smtp
            ? "AUTH_EMAIL_SERVER is set, so e-mail goes to that SMTP server; messages below are from earlier runs."
            : `Messages the app would have sent, newest first. They are kept in ${folder}.`}
        </p>
        {messages.length === 0 ? <p>No messages yet. Ask for a sign-in link at <a href="/auth/signin">/auth/signin</a>.</p> : null}
      </section>
      {messages.map((m) => (
        <article key={m.id} className="card outbox-message" aria-labelledby={`m-${m.id}`}>
          <h2 id={`m-${m.id}`}>{m.subject}</h2>
          <dl className="profile">
            <dt>To</dt>
            <dd className="outbox-to">{m.to}</dd>
            <dt>Sent</dt>
            <dd>{new Date(m.sentAt).toUTCString()}</dd>
          </dl>
          {m.code ? (
            <p>
              Code: <strong className="outbox-code">{m.code}</strong>
            </p>
          ) : null}
          {m.link ? (
            <p>
              <a className="button inline outbox-link" href={m.link}>
                Open the link
              </a>
            </p>
          ) : null}
          <details>
            <summary>Plain text</summary>
            <pre style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>{m.text}</pre>
          </details>
          <details>
            <summary>HTML</summary>
            {/* An empty sandbox: no scripts, no forms, no navigation from the message itself. */}
            <iframe title={`HTML part of "${m.subject}"`} sandbox="" srcDoc={m.html} style={{ width: "100%", height: "28rem", border: "1px solid var(--border)" }} />
          </details>
        </article>
      ))}
    </main>
  );
}
