// The /admin pages (ADR 085): the user list and one user's page. Plain links
// and form posts, so everything works without JavaScript. Names and addresses are shown as text
// (React escapes them), never as HTML or in attributes that run anything.
import type { ReactNode } from "react";
import { Form } from "react-router";
import { useT, type MessageKey, type Translate } from "~/i18n/react";
import { PageTitle } from "~/components/site-name";
import { DeleteWordField } from "./account-lifecycle-section";
import { ActivitySection } from "./activity-section";
import { methodLabel } from "./sign-in-method";
import { CsrfField, Field } from "./auth-forms";
import { useDescribeDevice } from "./device";
import { LocalTime } from "./local-time";
import type { Role } from "~/auth/accounts/roles.server";

type ListedUser = { id: string; email: string | null; name: string | null; role: string; disabled: boolean };
export type AdminUsersData = {
  page: "users";
  query: string;
  after: string | null;
  done: "deleted" | null;
  users: ListedUser[];
  next: string | null;
  /** The OAuth provider's apps page, while the provider is on. */
  clientsUrl: string | null;
};

type Done = "disabled" | "enabled" | "sessions-ended" | "reset-sent" | "second-factor-off" | "role-changed" | "unchanged";
export type AdminUserData = {
  page: "user";
  csrfToken: string;
  self: boolean;
  /** The word the admin types to delete the user (the one /account's deletion asks for). */
  deleteWord: string;
  /** Every role the control offers: `user`, `admin` and the app's own (app/auth.config.ts). */
  roles: readonly Role[];
  recentAuth: { recent: boolean; url: string };
  done: Done | null;
  user: {
    id: string;
    email: string | null;
    name: string | null;
    role: string;
    disabledAt: string | null;
    createdAt: string;
    emailVerified: boolean;
    waysIn: string[];
    secondFactor: boolean;
  };
  sessions: { id: string; kind: string; userAgent: string | null; method: string | null; methodType: string | null; createdAt: string; lastUsedAt: string }[];
  events: { id: string; type: string; at: string; ip: string | null; userAgent: string | null; method: string | null; methodType: string | null }[];
};

const DONE_KEYS = {
  disabled: "admin.done.disabled",
  enabled: "admin.done.enabled",
  "sessions-ended": "admin.done.sessionsEnded",
  "reset-sent": "admin.done.resetSent",
  "second-factor-off": "admin.done.secondFactorOff",
  "role-changed": "admin.done.roleChanged",
  unchanged: "admin.done.unchanged",
} as const;

/**
 * Every role has its label `admin.role.<name>`: the layer's (`user`, `admin`) in the layer's
 * catalogues, each role app/auth.config.ts adds in the app's, app/i18n/app/. A role without one
 * fails `npm run typecheck` here, with a message saying where to add it.
 */
type RoleWithoutLabel = Exclude<`admin.role.${Role}`, MessageKey>;
export const everyRoleHasALabel: [RoleWithoutLabel] extends [never] ? true : `add ${RoleWithoutLabel} to app/i18n/app/en.ts, fr.ts, de.ts and ar.ts` = true;

/** A role's label (see everyRoleHasALabel). */
function roleName(t: Translate, role: string): string {
  return t(`admin.role.${role as Role}`);
}

/** A way in as findUser names it ("password", "email", "passkey ×2", a provider id), in the admin's words. */
function wayName(t: Translate, way: string): string {
  if (way === "password") return t("admin.way.password");
  if (way === "email") return t("admin.way.email");
  const passkeys = /^passkey ×(\d+)$/.exec(way);
  if (passkeys) return t("admin.way.passkeys", { n: Number(passkeys[1]) });
  return way;
}

export function AdminUsers({ data }: { data: AdminUsersData }) {
  const t = useT();
  const nextHref = data.next ? `/admin?${new URLSearchParams({ ...(data.query ? { q: data.query } : {}), after: data.next })}` : null;
  const firstHref = data.after ? `/admin${data.query ? `?${new URLSearchParams({ q: data.query })}` : ""}` : null;
  return (
    <main>
      <PageTitle page={t("admin.title")} />
      <h1>{t("admin.title")}</h1>
      {data.done ? (
        <p className="notice" role="status" id="admin-done">
          {t("admin.done.deleted")}
        </p>
      ) : null}
      {data.clientsUrl ? (
        <p>
          <a href={data.clientsUrl} id="admin-clients-link">
            {t("admin.clients.title")}
          </a>
        </p>
      ) : null}
      <section className="card" aria-labelledby="admin-users-heading">
        <h2 id="admin-users-heading">{t("admin.users.heading")}</h2>
        <form method="get" action="/admin" role="search" id="admin-search">
          <label htmlFor="admin-q">{t("admin.search.label")}</label>
          <p className="muted" id="admin-q-hint">
            {t("admin.search.hint")}
          </p>
          <input id="admin-q" name="q" type="search" defaultValue={data.query} maxLength={100} aria-describedby="admin-q-hint" />
          <button type="submit" className="button inline">
            {t("admin.search.button")}
          </button>
        </form>
        {data.users.length === 0 ? (
          <p className="muted" id="admin-users-none">
            {t("admin.users.none")}
          </p>
        ) : (
          <table id="admin-users" className="data-table">
            <thead>
              <tr>
                <th scope="col">{t("admin.users.email")}</th>
                <th scope="col">{t("admin.users.name")}</th>
                <th scope="col">{t("admin.users.role")}</th>
                <th scope="col">{t("admin.users.state")}</th>
              </tr>
            </thead>
            <tbody>
              {data.users.map((u) => (
                <tr key={u.id} data-user-id={u.id}>
                  <td data-label={t("admin.users.email")}>
                    <a href={`/admin/users/${encodeURIComponent(u.id)}`}>{u.email ?? t("admin.users.noEmail")}</a>
                  </td>
                  <td data-label={t("admin.users.name")}>{u.name ?? ""}</td>
                  <td data-label={t("admin.users.role")}>{roleName(t, u.role)}</td>
                  <td data-label={t("admin.users.state")}>{u.disabled ? t("admin.state.disabled") : t("admin.state.enabled")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {nextHref || firstHref ? (
          <nav aria-label={t("admin.users.pages")} className="pager">
            {firstHref ? <a href={firstHref}>{t("admin.users.first")}</a> : null} {nextHref ? <a href={nextHref} rel="next">{t("admin.users.next")}</a> : null}
          </nav>
        ) : null}
      </section>
    </main>
  );
}

/** One action: a form that posts its intent (and fields) to the user's page. */
function ActionForm({ csrfToken, intent, label, danger, children, id }: { csrfToken: string; intent: string; label: string; danger?: boolean; children?: ReactNode; id: string }) {
  return (
    <Form method="post" id={id} className="admin-action">
      <CsrfField token={csrfToken} />
      <input type="hidden" name="intent" value={intent} />
      {children}
      <button type="submit" className={danger ? "button danger inline" : "button secondary inline"}>
        {label}
      </button>
    </Form>
  );
}

export function AdminUser({ data, formError }: { data: AdminUserData; formError: string | null }) {
  const t = useT();
  const describeDevice = useDescribeDevice();
  const { user, csrfToken } = data;
  const heading = user.email ?? user.name ?? user.id;
  return (
    <main>
      <PageTitle page={t("admin.user.title", { name: heading })} />
      <p>
        <a href="/admin">{t("admin.user.back")}</a>
      </p>
      <h1>{heading}</h1>
      {data.done ? (
        <p className="notice" role="status" id="admin-done">
          {t(DONE_KEYS[data.done])}
        </p>
      ) : null}
      {formError ? (
        <p className="alert" role="alert" id="admin-error">
          {formError}
        </p>
      ) : null}
      {data.recentAuth.recent ? null : (
        <p className="notice" id="reauth-hint">
          {t.rich("reauth.hint", { link: (c) => <a href={data.recentAuth.url}>{c}</a> })}
        </p>
      )}

      <section className="card" aria-labelledby="admin-profile-heading">
        <h2 id="admin-profile-heading">{t("admin.user.details")}</h2>
        <dl className="profile" id="admin-profile">
          <dt>{t("admin.users.email")}</dt>
          <dd>
            {user.email ?? t("admin.users.noEmail")} {user.email ? (user.emailVerified ? t("account.verified") : t("account.notVerified")) : null}
          </dd>
          <dt>{t("admin.users.name")}</dt>
          <dd>{user.name ?? ""}</dd>
          <dt>{t("admin.users.role")}</dt>
          <dd id="admin-role">{roleName(t, user.role)}</dd>
          <dt>{t("admin.users.state")}</dt>
          <dd id="admin-state">{user.disabledAt ? t("admin.state.disabled") : t("admin.state.enabled")}</dd>
          <dt>{t("account.memberSince")}</dt>
          <dd>
            <LocalTime value={user.createdAt} />
          </dd>
          <dt>{t("admin.user.waysIn")}</dt>
          <dd id="admin-ways">{user.waysIn.length ? user.waysIn.map((w) => wayName(t, w)).join(", ") : t("admin.user.waysNone")}</dd>
          <dt>{t("admin.user.secondFactor")}</dt>
          <dd id="admin-second-factor">{user.secondFactor ? t("admin.user.on") : t("admin.user.off")}</dd>
        </dl>
      </section>

      <section className="card" aria-labelledby="admin-sessions-heading">
        <h2 id="admin-sessions-heading">{t("admin.user.sessions")}</h2>
        {data.sessions.length === 0 ? (
          <p className="muted">{t("admin.user.sessionsNone")}</p>
        ) : (
          <table id="admin-sessions" className="data-table">
            <thead>
              <tr>
                <th scope="col">{t("activity.device")}</th>
                <th scope="col">{t("admin.user.sessionMethod")}</th>
                <th scope="col">{t("admin.user.sessionStarted")}</th>
                <th scope="col">{t("admin.user.sessionLastUsed")}</th>
              </tr>
            </thead>
            <tbody>
              {data.sessions.map((s) => (
                <tr key={s.id}>
                  <td data-label={t("activity.device")}>{describeDevice(s.userAgent)}</td>
                  <td data-label={t("admin.user.sessionMethod")}>{s.method ? methodLabel(t, s.methodType, s.method) : ""}</td>
                  <td data-label={t("admin.user.sessionStarted")}>
                    <LocalTime value={s.createdAt} />
                  </td>
                  <td data-label={t("admin.user.sessionLastUsed")}>
                    <LocalTime value={s.lastUsedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section className="card" aria-labelledby="admin-actions-heading">
        <h2 id="admin-actions-heading">{t("admin.actions.heading")}</h2>
        {user.disabledAt ? (
          <ActionForm id="admin-enable" csrfToken={csrfToken} intent="enable" label={t("admin.action.enable")} />
        ) : data.self ? null : (
          <ActionForm id="admin-disable" csrfToken={csrfToken} intent="disable" label={t("admin.action.disable")} danger />
        )}
        <ActionForm id="admin-end-sessions" csrfToken={csrfToken} intent="end-sessions" label={t("admin.action.endSessions")} danger />
        {user.email ? <ActionForm id="admin-send-reset" csrfToken={csrfToken} intent="send-reset" label={t("admin.action.sendReset")} /> : null}
        {user.secondFactor ? (
          <ActionForm id="admin-second-factor-off" csrfToken={csrfToken} intent="second-factor-off" label={t("admin.action.secondFactorOff")} danger />
        ) : null}
        <ActionForm id="admin-set-role" csrfToken={csrfToken} intent="set-role" label={t("admin.action.setRole")}>
          <label htmlFor="admin-role-select">{t("admin.users.role")}</label>
          <select id="admin-role-select" name="role" defaultValue={data.roles.includes(user.role as Role) ? user.role : "user"}>
            {data.roles.map((role) => (
              <option key={role} value={role}>
                {roleName(t, role)}
              </option>
            ))}
          </select>
        </ActionForm>
        {data.self ? null : (
          <ActionForm id="admin-delete" csrfToken={csrfToken} intent="delete" label={t("admin.action.delete")} danger>
            <p>{t("admin.delete.intro")}</p>
            <DeleteWordField id="admin-delete-confirm" word={data.deleteWord} />
          </ActionForm>
        )}
      </section>

      <ActivitySection events={data.events} />
    </main>
  );
}

type ListedClient = { clientId: string; name: string; public: boolean; firstParty: boolean; source: string; redirectUris: string[]; createdAt: string };
export type AdminClientsData = { page: "clients"; csrfToken: string; done: "client-removed" | null; clients: ListedClient[] };
export type ClientCreated = { clientId: string; name: string; secret: string | null };

/**
 * /admin/oauth-clients (docs/features/provider.md): the apps that may sign their users in with
 * Vestibule, Add and Remove, as `npm run oauth:client:*` do. A new client's secret is shown once,
 * in the answer to the form, never in a URL.
 */
export function AdminClients({ data, created, formError }: { data: AdminClientsData; created: ClientCreated | null; formError: string | null }) {
  const t = useT();
  return (
    <main>
      <PageTitle page={t("admin.clients.title")} />
      <h1>{t("admin.clients.title")}</h1>
      <p>
        <a href="/admin">{t("admin.user.back")}</a>
      </p>
      {data.done ? (
        <p className="notice" role="status" id="admin-done">
          {t("admin.clients.removed")}
        </p>
      ) : null}
      {created ? (
        <div className="notice" role="status" id="admin-client-created">
          <p>{t("admin.clients.created", { name: created.name })}</p>
          <p>
            {t("admin.clients.clientId")} <code id="admin-client-id">{created.clientId}</code>
          </p>
          {created.secret ? (
            <p>
              {t("admin.clients.secret")} <code id="admin-client-secret">{created.secret}</code> {t("admin.clients.secretOnce")}
            </p>
          ) : null}
        </div>
      ) : null}
      {formError ? (
        <p className="alert" role="alert" id="admin-error">
          {formError}
        </p>
      ) : null}
      <section className="card" aria-labelledby="admin-clients-heading">
        <h2 id="admin-clients-heading">{t("admin.clients.heading")}</h2>
        {data.clients.length === 0 ? <p className="muted">{t("admin.clients.none")}</p> : null}
        <ul className="sessions" id="admin-clients">
          {data.clients.map((c) => (
            <li key={c.clientId} data-client-id={c.clientId}>
              <div>
                <div>
                  {c.name} <code>{c.clientId}</code>
                </div>
                <div className="muted">
                  {c.public ? t("admin.clients.public") : t("admin.clients.confidential")}
                  {c.firstParty ? ` · ${t("admin.clients.firstParty")}` : ""} · <LocalTime value={c.createdAt} />
                </div>
                {c.redirectUris.map((u) => (
                  <div key={u} className="muted">
                    {u}
                  </div>
                ))}
              </div>
              <Form method="post">
                <CsrfField token={data.csrfToken} />
                <input type="hidden" name="intent" value="client-remove" />
                <input type="hidden" name="clientId" value={c.clientId} />
                <button type="submit" className="button danger inline" aria-label={t("admin.clients.removeNamed", { name: c.name })}>
                  {t("admin.clients.remove")}
                </button>
              </Form>
            </li>
          ))}
        </ul>
      </section>
      <section className="card" aria-labelledby="admin-client-add-heading">
        <h2 id="admin-client-add-heading">{t("admin.clients.add")}</h2>
        <Form method="post" id="admin-client-add" className="stack">
          <CsrfField token={data.csrfToken} />
          <input type="hidden" name="intent" value="client-add" />
          <Field id="admin-client-name" label={t("admin.clients.name")} name="name" type="text" required />
          <label htmlFor="admin-client-redirects">{t("admin.clients.redirectUris")}</label>
          <textarea id="admin-client-redirects" name="redirectUris" rows={3} required />
          <label>
            <input type="checkbox" name="public" /> {t("admin.clients.publicLabel")}
          </label>
          <label>
            <input type="checkbox" name="firstParty" /> {t("admin.clients.firstPartyLabel")}
          </label>
          <button type="submit" className="button">
            {t("admin.clients.addButton")}
          </button>
        </Form>
      </section>
    </main>
  );
}
