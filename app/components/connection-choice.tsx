// The address step's organization sign-in (ADR 152): "Continue with <organization>" for each
// connection of the address's domain — one button, or a labelled choice when there are several.
// Plain links (GET /sso/<id>/signin starts the sign-in), so they work without JavaScript.
import { useT } from "~/i18n/react";

export type OfferedConnection = { id: string; organizationName: string; url: string };

export function ConnectionChoice({ connections, id = "signin-connections" }: { connections: readonly OfferedConnection[]; id?: string }) {
  const t = useT();
  if (connections.length === 0) return null;
  return (
    <div className="stack" id={id} role="group" aria-label={t("signin.connections")}>
      {connections.length > 1 ? <p className="muted">{t("signin.connectionsChoose")}</p> : null}
      {connections.map((c) => (
        <a key={c.id} className="button" href={c.url} data-connection={c.id}>
          {t("signin.continueWith", { organization: c.organizationName })}
        </a>
      ))}
    </div>
  );
}

/**
 * The address step as a JSON client sends it (POST /auth/signin, `X-Auth-Return-Redirect: 1`):
 * the domain's connections. Rejects when the answer is not that, so the caller can post the form.
 */
export async function fetchConnections(form: HTMLFormElement): Promise<OfferedConnection[]> {
  const body = new URLSearchParams();
  for (const [name, value] of new FormData(form)) if (typeof value === "string") body.append(name, value);
  const res = await fetch(form.action, { method: "POST", body, headers: { "X-Auth-Return-Redirect": "1", Accept: "application/json" }, credentials: "same-origin" });
  if (!res.ok) throw new Error(`address step: ${res.status}`);
  const answer = (await res.json()) as { connections?: unknown };
  if (!Array.isArray(answer.connections)) throw new Error("address step: no connections");
  return answer.connections as OfferedConnection[];
}
