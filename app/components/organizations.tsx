// The /orgs pages (docs/features/organizations.md): plain forms that work without JavaScript, every
// text from the catalogue, every field labelled, refusals announced beside the form.
import { Form } from "react-router";
import { useT, type Translate } from "~/i18n/react";
import type { MessageKey } from "~/i18n/catalogues/en";
import { AuthCard, CsrfField, Field } from "./auth-forms";
import { LocalTime } from "./local-time";
import { OidcConnectionsSection, type OidcConnectionsData } from "./oidc-connections-section";
import { SamlSection, type SamlConnection } from "./saml-section";
import { Ltr } from "./ltr";
import { PageTitle } from "./site-name";
import { PolicySection, type PolicyData } from "./organization-policy";
import { IntentForm } from "./intent-form";

type Role = "owner" | "admin" | "member";
/** A refused form: the sentence, the field (or row, `domain:<id>`) it is about, and what was typed. */
type ActionData = { formError?: string; field?: string; values?: Record<string, string>; reauthUrl?: string; scimToken?: { name: string; secret: string } } | undefined;

/** The refusal's sentence when it is about `field`: shown beside that field, not above the page. */
function errorFor(actionData: ActionData, field: string): string | undefined {
  return actionData?.formError && actionData.field === field ? actionData.formError : undefined;
}

/** What the visitor typed into `name` before the refusal. */
function typed(actionData: ActionData, name: string): string | undefined {
  return actionData?.values?.[name];
}

const ROLE_KEYS: Record<Role, MessageKey> = { owner: "org.role.owner", admin: "org.role.admin", member: "org.role.member" };
export function roleName(t: Translate, role: string): string {
  return Object.hasOwn(ROLE_KEYS, role) ? t(ROLE_KEYS[role as Role]) : role;
}

function Notice({ text }: { text: string | null }) {
  return text ? (
    <p className="notice" role="status">
      {text}
    </p>
  ) : null;
}

/** A refusal about no one field (or about one this page does not show): above the forms. */
function Refusal({ actionData, shownFields = [] }: { actionData: ActionData; shownFields?: string[] }) {
  const t = useT();
  if (!actionData?.formError || (actionData.field && shownFields.includes(actionData.field))) return null;
  return (
    <div className="alert" role="alert" id="org-form-error">
      <p>{actionData.formError}</p>
      {actionData.reauthUrl ? (
        <p>
          <a className="button inline" href={actionData.reauthUrl}>
            {t("reauth.button")}
          </a>
        </p>
      ) : null}
    </div>
  );
}

/**
 * Past the recent sign-in window the page says so before offering forms it would refuse: one
 * information notice with one button. After a refused change the refusal says it instead (one notice).
 */
function RecentAuthNote({ recentAuth, actionData }: { recentAuth: { recent: boolean; url: string }; actionData?: ActionData }) {
  const t = useT();
  if (recentAuth.recent || actionData?.reauthUrl) return null;
  return (
    <div className="notice info" id="org-reauth-note">
      <p>{t("org.reauthNote")}</p>
      <p>
        <a className="button inline" href={recentAuth.url}>
          {t("reauth.button")}
        </a>
      </p>
    </div>
  );
}

type ListData = {
  csrfToken: string;
  organizations: { id: string; slug: string; name: string; role: Role }[];
  active: string | null;
  canCreate: boolean;
  callbackUrl: string | null;
  notice: string | null;
};

export function OrganizationList({ data }: { data: ListData }) {
  const t = useT();
  return (
    <main>
      <PageTitle page={t("org.list.title")} />
      <h1>{t("org.list.title")}</h1>
      <Notice text={data.notice} />
      <section className="card" aria-labelledby="orgs-heading">
        <h2 id="orgs-heading">{t("org.list.mine")}</h2>
        {data.organizations.length === 0 ? <p>{t("org.list.none")}</p> : null}
        <ul className="sessions" id="organizations">
          {data.organizations.map((o) => (
            <li key={o.id} data-org={o.slug}>
              <div>
                <a href={`/orgs/${encodeURIComponent(o.slug)}`}>{o.name}</a> {data.active === o.slug ? <span className="badge">{t("org.list.active")}</span> : null}
                <div className="muted">{t("org.list.yourRole", { role: roleName(t, o.role) })}</div>
              </div>
              {data.active === o.slug ? null : (
                <Form method="post" action="/orgs/switch" reloadDocument>
                  <CsrfField token={data.csrfToken} />
                  <input type="hidden" name="slug" value={o.slug} />
                  {data.callbackUrl ? <input type="hidden" name="callbackUrl" value={data.callbackUrl} /> : null}
                  <button type="submit" className="button inline">
                    {t("org.list.switch", { name: o.name })}
                  </button>
                </Form>
              )}
            </li>
          ))}
        </ul>
        {data.active ? (
          <Form method="post" action="/orgs/switch" reloadDocument>
            <CsrfField token={data.csrfToken} />
            <input type="hidden" name="slug" value="" />
            <button type="submit" className="button secondary inline">
              {t("org.list.clear")}
            </button>
          </Form>
        ) : null}
      </section>
      {data.canCreate ? (
        <p>
          <a className="button inline" href="/orgs/new">
            {t("org.new.title")}
          </a>
        </p>
      ) : null}
    </main>
  );
}

type NewData = { csrfToken: string; create: "yes" | "unverified" | "admins"; recentAuth: { recent: boolean; url: string } };

export function NewOrganization({ data, actionData }: { data: NewData; actionData: ActionData }) {
  const t = useT();
  if (data.create !== "yes") {
    return (
      <AuthCard title={t("org.new.title")}>
        <p role="alert">{t(data.create === "unverified" ? "org.new.unverified" : "org.new.adminsOnly")}</p>
        <p>
          <a href="/orgs">{t("org.list.title")}</a>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={t("org.new.title")}>
      <RecentAuthNote recentAuth={data.recentAuth} actionData={actionData} />
      <Refusal actionData={actionData} shownFields={["org-name", "org-slug"]} />
      <Form method="post" reloadDocument id="org-new-form">
        <CsrfField token={data.csrfToken} />
        <Field id="org-name" name="name" label={t("org.new.name")} required maxLength={100} autoComplete="organization" defaultValue={typed(actionData, "name")} error={errorFor(actionData, "org-name")} />
        <Field id="org-slug" name="slug" label={t("org.new.slug")} required minLength={2} maxLength={40} pattern="[a-z0-9]+(-[a-z0-9]+)*" aria-describedby="org-slug-help" autoCapitalize="none" spellCheck={false} defaultValue={typed(actionData, "slug")} error={errorFor(actionData, "org-slug")} />
        <p className="muted" id="org-slug-help">
          {t.rich("org.new.slugHelp", { path: (c) => <bdi dir="ltr">{c}</bdi> })}
        </p>
        <button type="submit" className="button">
          {t("org.new.submit")}
        </button>
      </Form>
    </AuthCard>
  );
}

type Member = { id: string; userId: string; name: string | null; email: string | null; role: Role; since: string };
type Invitation = { id: string; email: string; role: string; expires: string; sendCount: number; canResend: boolean };
type ScimToken = { id: string; name: string; createdAt: string; lastUsedAt: string | null };
type Domain = { id: string; domain: string; state: "pending" | "verified" | "failed"; recordName: string; recordValue: string; verifiedAt: string | null; lastCheckedAt: string | null };
type OrgData = {
  csrfToken: string;
  organization: { id: string; slug: string; name: string };
  membership: { id: string; role: Role };
  active: boolean;
  roles: readonly Role[];
  members: Member[];
  invitations: Invitation[] | null;
  domains: Domain[] | null;
  scim: { tokens: ScimToken[]; url: string } | null;
  samlConnections: SamlConnection[] | null;
  oidcConnections: OidcConnectionsData | null;
  policy: PolicyData | null;
  recentAuth: { recent: boolean; url: string };
  notice: string | null;
};

const DOMAIN_STATE_KEYS = { pending: "org.domains.pending", verified: "org.domains.verified", failed: "org.domains.failed" } as const;


export function OrganizationPage({ data, actionData }: { data: OrgData; actionData: ActionData }) {
  const t = useT();
  const { csrfToken, organization, membership } = data;
  const admin = membership.role === "owner" || membership.role === "admin";
  const owner = membership.role === "owner";
  const person = (m: Member) => m.name ?? m.email ?? m.userId;
  const assignable = data.roles.filter((r) => owner || r !== "owner");
  return (
    <main>
      <PageTitle page={organization.name} />
      <h1>{organization.name}</h1>
      <p className="muted">
        {t("org.list.yourRole", { role: roleName(t, membership.role) })} {data.active ? <span className="badge">{t("org.list.active")}</span> : null}
      </p>
      <Notice text={data.notice} />
      <RecentAuthNote recentAuth={data.recentAuth} actionData={actionData} />
      <Refusal actionData={actionData} shownFields={[...(owner ? ["org-rename"] : []), ...(data.invitations ? ["invite-email"] : []), ...(data.domains ? ["domain-name", ...data.domains.map((d) => `domain:${d.id}`)] : [])]} />

      <section className="card" aria-labelledby="members-heading">
        <h2 id="members-heading">{t("org.members.title")}</h2>
        <table className="data-table" id="members">
          <thead>
            <tr>
              <th scope="col">{t("org.members.person")}</th>
              <th scope="col">{t("org.members.role")}</th>
              <th scope="col">{t("org.members.since")}</th>
              {admin ? <th scope="col">{t("org.members.actions")}</th> : null}
            </tr>
          </thead>
          <tbody>
            {data.members.map((m) => (
              <tr key={m.id} data-member={m.id}>
                <td data-label={t("org.members.person")}>
                  {/* One value box: on a phone the name, the address and the badge stay together in the value column. */}
                  <div className="cell-value">
                    {m.name ? <bdi>{m.name}</bdi> : m.email ? <Ltr>{m.email}</Ltr> : m.userId} {m.id === membership.id ? <span className="badge">{t("org.members.you")}</span> : null}
                    {m.email && m.name ? (
                      <div>
                        <Ltr className="muted">{m.email}</Ltr>
                      </div>
                    ) : null}
                  </div>
                </td>
                <td data-label={t("org.members.role")}>{roleName(t, m.role)}</td>
                <td data-label={t("org.members.since")}>
                  <LocalTime value={m.since} />
                </td>
                {admin ? (
                  <td data-label={t("org.members.actions")} className="actions-cell">
                    {(owner || m.role !== "owner") && m.id !== membership.id ? (
                      <>
                        <Form method="post" reloadDocument className="inline-form">
                          <CsrfField token={csrfToken} />
                          <input type="hidden" name="intent" value="role" />
                          <input type="hidden" name="membershipId" value={m.id} />
                          <label htmlFor={`role-${m.id}`}>{t("org.members.roleOf", { person: person(m) })}</label>
                          <select id={`role-${m.id}`} name="role" defaultValue={m.role}>
                            {assignable.map((r) => (
                              <option key={r} value={r}>
                                {roleName(t, r)}
                              </option>
                            ))}
                          </select>
                          <button type="submit" className="button secondary inline">
                            {t("org.members.saveRole")}
                          </button>
                        </Form>
                        <IntentForm csrfToken={csrfToken} intent="remove" fields={{ membershipId: m.id }} label={t("org.members.remove", { person: person(m) })} danger />
                      </>
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      {data.invitations ? (
        <section className="card" aria-labelledby="invitations-heading">
          <h2 id="invitations-heading">{t("org.invite.title")}</h2>
          {data.invitations.length === 0 ? <p>{t("org.invite.none")}</p> : null}
          <ul className="sessions" id="invitations">
            {data.invitations.map((i) => (
              <li key={i.id} data-invitation={i.id}>
                <div>
                  <Ltr>{i.email}</Ltr> · {roleName(t, i.role)}
                  <div className="muted">{t.rich("org.invite.expires", { time: <LocalTime value={i.expires} /> })}</div>
                </div>
                {i.canResend ? <IntentForm csrfToken={csrfToken} intent="invitation-resend" fields={{ invitationId: i.id }} label={t("org.invite.resend", { address: i.email })} /> : null}
                <IntentForm csrfToken={csrfToken} intent="invitation-revoke" fields={{ invitationId: i.id }} label={t("org.invite.revoke", { address: i.email })} danger />
              </li>
            ))}
          </ul>
          <Form method="post" reloadDocument id="org-invite-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="intent" value="invite" />
            <Field id="invite-email" name="email" type="email" label={t("org.invite.email")} required autoComplete="off" defaultValue={typed(actionData, "email")} error={errorFor(actionData, "invite-email")} />
            <div className="field">
              <label htmlFor="invite-role">{t("org.invite.role")}</label>
              <select id="invite-role" name="role" defaultValue="member">
                {assignable.map((r) => (
                  <option key={r} value={r}>
                    {roleName(t, r)}
                  </option>
                ))}
              </select>
            </div>
            <button type="submit" className="button">
              {t("org.invite.submit")}
            </button>
          </Form>
        </section>
      ) : null}

      {data.domains ? (
        <section className="card" aria-labelledby="domains-heading">
          <h2 id="domains-heading">{t("org.domains.title")}</h2>
          <p>{t("org.domains.intro")}</p>
          {data.domains.length === 0 ? <p>{t("org.domains.none")}</p> : null}
          <ul className="sessions" id="domains">
            {data.domains.map((d) => (
              <li key={d.id} data-domain={d.domain} data-state={d.state}>
                <div>
                  <strong dir="ltr">{d.domain}</strong> <span className="badge">{t(DOMAIN_STATE_KEYS[d.state])}</span>
                  {errorFor(actionData, `domain:${d.id}`) ? (
                    <p className="alert" role="alert" id={`domain-error-${d.id}`}>
                      {errorFor(actionData, `domain:${d.id}`)}
                    </p>
                  ) : null}
                  <dl className="profile">
                    <dt>{t("org.domains.recordName")}</dt>
                    <dd dir="ltr">
                      <code>{d.recordName}</code>
                    </dd>
                    <dt>{t("org.domains.recordType")}</dt>
                    <dd dir="ltr">
                      <code>{t("org.domains.txt")}</code>
                    </dd>
                    <dt>{t("org.domains.recordValue")}</dt>
                    <dd dir="ltr">
                      <code>{d.recordValue}</code>
                    </dd>
                  </dl>
                  {d.lastCheckedAt ? <div className="muted">{t.rich(d.state === "verified" ? "org.domains.lastChecked" : "org.domains.notFoundYet", { time: <LocalTime value={d.lastCheckedAt} /> })}</div> : null}
                </div>
                <IntentForm csrfToken={csrfToken} intent="domain-verify" fields={{ domainId: d.id }} label={t("org.domains.verify", { domain: d.domain })} />
                <IntentForm csrfToken={csrfToken} intent="domain-remove" fields={{ domainId: d.id }} label={t("org.domains.remove", { domain: d.domain })} danger />
              </li>
            ))}
          </ul>
          <Form method="post" reloadDocument id="org-domain-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="intent" value="domain-add" />
            <Field id="domain-name" name="domain" label={t("org.domains.domain")} required autoCapitalize="none" spellCheck={false} dir="ltr" defaultValue={typed(actionData, "domain")} error={errorFor(actionData, "domain-name")} />
            <button type="submit" className="button">
              {t("org.domains.add")}
            </button>
          </Form>
        </section>
      ) : null}

      {data.scim ? (
        <section className="card" aria-labelledby="scim-heading">
          <h2 id="scim-heading">{t("org.scim.title")}</h2>
          <p>{t("org.scim.intro")}</p>
          <dl className="profile">
            <dt>{t("org.scim.url")}</dt>
            <dd dir="ltr">
              <code id="scim-url">{data.scim.url}</code>
            </dd>
          </dl>
          {actionData?.scimToken ? (
            <div className="notice" role="status" id="scim-new-token">
              <h3>{t("org.scim.secretTitle", { name: actionData.scimToken.name })}</h3>
              <p>{t("org.scim.secretNote")}</p>
              <p dir="ltr">
                <code>{actionData.scimToken.secret}</code>
              </p>
            </div>
          ) : null}
          {data.scim.tokens.length === 0 ? <p>{t("org.scim.none")}</p> : null}
          <ul className="sessions" id="scim-tokens">
            {data.scim.tokens.map((token) => (
              <li key={token.id} data-token={token.id}>
                <div>
                  <strong>{token.name}</strong>
                  <div className="muted">{t.rich("org.scim.created", { time: <LocalTime value={token.createdAt} /> })}</div>
                  <div className="muted">{token.lastUsedAt ? t.rich("org.scim.lastUsed", { time: <LocalTime value={token.lastUsedAt} /> }) : t("org.scim.neverUsed")}</div>
                </div>
                <IntentForm csrfToken={csrfToken} intent="scim-token-revoke" fields={{ tokenId: token.id }} label={t("org.scim.revoke", { name: token.name })} danger />
              </li>
            ))}
          </ul>
          <Form method="post" reloadDocument id="org-scim-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="intent" value="scim-token-create" />
            <Field id="scim-token-name" name="name" label={t("org.scim.name")} required maxLength={100} />
            <button type="submit" className="button">
              {t("org.scim.create")}
            </button>
          </Form>
        </section>
      ) : null}

      {data.samlConnections ? <SamlSection csrfToken={csrfToken} connections={data.samlConnections} /> : null}

      {data.oidcConnections ? <OidcConnectionsSection data={data.oidcConnections} csrfToken={csrfToken} /> : null}
      <PolicySection csrfToken={csrfToken} data={data.policy} />

      {admin ? (
        <p>
          <a href={`/orgs/${encodeURIComponent(organization.slug)}/audit`}>{t("org.audit.link")}</a>
        </p>
      ) : null}

      {owner ? (
        <section className="card" aria-labelledby="settings-heading">
          <h2 id="settings-heading">{t("org.settings.title")}</h2>
          <Form method="post" reloadDocument id="org-rename-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="intent" value="rename" />
            <Field id="org-rename" name="name" label={t("org.new.name")} required maxLength={100} defaultValue={typed(actionData, "rename") ?? organization.name} error={errorFor(actionData, "org-rename")} />
            <button type="submit" className="button secondary">
              {t("org.settings.rename")}
            </button>
          </Form>
          <h3>{t("org.delete.title")}</h3>
          <p>{t.rich("org.delete.intro", { slug: <Ltr>{organization.slug}</Ltr> })}</p>
          <Form method="post" reloadDocument id="org-delete-form">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="intent" value="delete" />
            <Field id="org-delete-confirm" name="confirm" label={t("org.delete.confirm")} required autoComplete="off" autoCapitalize="none" spellCheck={false} />
            <button type="submit" className="button danger">
              {t("org.delete.submit")}
            </button>
          </Form>
        </section>
      ) : null}

      <section className="card" aria-labelledby="leave-heading">
        <h2 id="leave-heading">{t("org.leave.title")}</h2>
        <p>{t("org.leave.intro")}</p>
        <IntentForm csrfToken={csrfToken} intent="leave" fields={{}} label={t("org.leave.submit", { name: organization.name })} danger id="org-leave-form" />
      </section>
      <p>
        <a href="/orgs">{t("org.list.title")}</a>
      </p>
    </main>
  );
}

type AuditEvent = { id: string; at: string; type: string; actorId: string | null; actorEmail: string | null; ip: string | null; detail: Record<string, unknown>; words: string };
type AuditData = { organization: { slug: string; name: string }; events: AuditEvent[]; page: number; hasNext: boolean };

const EVENT_KEYS: Record<string, MessageKey> = {
  "organization-created": "org.event.organizationCreated",
  "organization-renamed": "org.event.organizationRenamed",
  "member-added": "org.event.memberAdded",
  "member-role-changed": "org.event.memberRoleChanged",
  "member-removed": "org.event.memberRemoved",
  "member-left": "org.event.memberLeft",
  "invitation-sent": "org.event.invitationSent",
  "invitation-resent": "org.event.invitationResent",
  "invitation-revoked": "org.event.invitationRevoked",
  "invitation-accepted": "org.event.invitationAccepted",
  "domain-added": "org.event.domainAdded",
  "domain-verified": "org.event.domainVerified",
  "domain-failed": "org.event.domainFailed",
  "domain-removed": "org.event.domainRemoved",
  "scim-token-created": "org.event.scimTokenCreated",
  "scim-token-revoked": "org.event.scimTokenRevoked",
  "scim-user-created": "org.event.scimUserCreated",
  "scim-user-updated": "org.event.scimUserUpdated",
  "scim-user-deactivated": "org.event.scimUserDeactivated",
  "scim-user-reactivated": "org.event.scimUserReactivated",
  "scim-user-deleted": "org.event.scimUserDeleted",
  "scim-group-created": "org.event.scimGroupCreated",
  "scim-group-updated": "org.event.scimGroupUpdated",
  "scim-group-deleted": "org.event.scimGroupDeleted",
  "oidc-connection-added": "org.event.oidcConnectionAdded",
  "oidc-connection-removed": "org.event.oidcConnectionRemoved",
  "policy-changed": "org.event.policyChanged",
  "break-glass-used": "org.event.breakGlassUsed",
  "sso-sessions-ended": "org.event.ssoSessionsEnded",
  "saml-connection-added": "org.event.samlConnectionAdded",
  "saml-connection-removed": "org.event.samlConnectionRemoved",
  "saml-certificate-added": "org.event.samlCertificateAdded",
  "saml-certificate-removed": "org.event.samlCertificateRemoved",
  "saml-idp-initiated-changed": "org.event.samlIdpInitiatedChanged",
};

export function OrganizationAudit({ data }: { data: AuditData }) {
  const t = useT();
  const base = `/orgs/${encodeURIComponent(data.organization.slug)}/audit`;
  return (
    <main>
      <PageTitle page={t("org.audit.title", { name: data.organization.name })} />
      <h1>{t("org.audit.title", { name: data.organization.name })}</h1>
      <p>
        <a href={`${base}?format=json`} download>
          {t("org.audit.downloadJson")}
        </a>{" "}
        · <a href={`${base}?format=csv`} download>
          {t("org.audit.downloadCsv")}
        </a>
      </p>
      <section className="card" aria-labelledby="audit-heading">
        <h2 id="audit-heading">{t("org.audit.events")}</h2>
        {data.events.length === 0 ? <p>{t("org.audit.none")}</p> : null}
        <table className="data-table" id="audit">
          <thead>
            <tr>
              <th scope="col">{t("org.audit.when")}</th>
              <th scope="col">{t("org.audit.what")}</th>
              <th scope="col">{t("org.audit.who")}</th>
              <th scope="col">{t("org.audit.details")}</th>
            </tr>
          </thead>
          <tbody>
            {data.events.map((e) => (
              <tr key={e.id} data-event={e.type}>
                <td data-label={t("org.audit.when")}>
                  <LocalTime value={e.at} />
                </td>
                <td data-label={t("org.audit.what")}>{Object.hasOwn(EVENT_KEYS, e.type) ? t(EVENT_KEYS[e.type]!) : e.type}</td>
                <td data-label={t("org.audit.who")} className="wrap">{e.actorEmail ? <Ltr>{e.actorEmail}</Ltr> : (e.actorId ?? (e.detail.source === "cli" ? t("org.audit.operator") : t("org.audit.system")))}</td>
                <td data-label={t("org.audit.details")} className="wrap">
                  {e.words}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <nav aria-label={t("org.audit.pages")}>
          {data.page > 1 ? <a href={`${base}?page=${data.page - 1}`}>{t("org.audit.newer")}</a> : null} {data.hasNext ? <a href={`${base}?page=${data.page + 1}`}>{t("org.audit.older")}</a> : null}
        </nav>
      </section>
      <p>
        <a href={`/orgs/${encodeURIComponent(data.organization.slug)}`}>{data.organization.name}</a>
      </p>
    </main>
  );
}

type InvitationData = {
  csrfToken: string;
  token: string | null;
  invitation: { state: "invalid" } | { state: "wrong-address" } | { state: "unverified" } | { state: "open"; organization: string; role: Role } | { state: "member"; organization: string; slug: string };
};

export function InvitationCard({ data, actionData }: { data: InvitationData; actionData: { formError?: string } | undefined }) {
  const t = useT();
  const inv = data.invitation;
  if (inv.state === "member" && !actionData?.formError) {
    return (
      <AuthCard title={t("org.invitation.title")}>
        <p role="status">{t.rich("org.invitation.alreadyMember", { organization: <bdi>{inv.organization}</bdi> })}</p>
        <p>
          <a className="button inline" href={`/orgs/${encodeURIComponent(inv.slug)}`}>
            {t("org.invitation.open", { organization: inv.organization })}
          </a>
        </p>
      </AuthCard>
    );
  }
  if (actionData?.formError || inv.state !== "open" || !data.token) {
    const message = actionData?.formError ?? (inv.state === "wrong-address" ? t("org.invitation.wrongAddress") : inv.state === "unverified" ? t("org.invitation.unverified") : t("org.invitation.invalid"));
    return (
      <AuthCard title={t("org.invitation.title")}>
        <p role="alert">{message}</p>
        <p>
          <a href="/orgs">{t("org.list.title")}</a>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={t("org.invitation.title")}>
      <p>{t.rich("org.invitation.intro", { organization: inv.organization, role: roleName(t, inv.role), strong: (c) => <strong>{c}</strong> })}</p>
      <Form method="post" reloadDocument id="org-invitation-form">
        <CsrfField token={data.csrfToken} />
        <input type="hidden" name="token" value={data.token} />
        <button type="submit" className="button">
          {t("org.invitation.accept", { organization: inv.organization })}
        </button>
      </Form>
    </AuthCard>
  );
}
