// The audit log's "details" column in words (docs/features/organizations.md): what each event
// changed, in the reader's language — a role from → to, the settings a policy change touched, the
// domain, the address — never the stored JSON with its internal ids. The JSON and CSV downloads
// keep the stored detail as it is.
import type { OrgAuditEvent } from "~/auth/organizations/audit.server";
import { db } from "~/db/client.server";
import { currentDirection, t, type MessageKey } from "~/i18n/t.server";
import { describeLifetime } from "~/mail/templates.server";

const ROLE_KEYS: Record<string, MessageKey> = { owner: "org.role.owner", admin: "org.role.admin", member: "org.role.member" };
const SETTING_KEYS: Record<string, MessageKey> = {
  requireSso: "org.audit.d.requireSso",
  requireMfa: "org.audit.d.requireMfa",
  breakGlassOwners: "org.audit.d.breakGlassOwners",
  sessionIdleMinutes: "org.audit.d.sessionIdleMinutes",
  sessionAbsoluteMinutes: "org.audit.d.sessionAbsoluteMinutes",
};

/** Machine text (an address, a domain, an issuer) inside a sentence: isolated in a right-to-left page. */
const isolated = (text: string) => (currentDirection() === "rtl" ? `\u2068${text}\u2069` : text);
const str = (value: unknown) => (typeof value === "string" ? value : null);
const role = (value: unknown) => (typeof value === "string" && Object.hasOwn(ROLE_KEYS, value) ? t(ROLE_KEYS[value]!) : "");

type People = Map<string, string>;

function person(people: People, userId: unknown): string {
  const email = typeof userId === "string" ? people.get(userId) : undefined;
  return email ? isolated(email) : t("org.audit.d.someone");
}

/** One policy setting's value in words. */
function settingValue(name: string, value: unknown, people: People): string {
  if (name === "requireSso" || name === "requireMfa") return t(value ? "org.audit.d.on" : "org.audit.d.off");
  if (name === "breakGlassOwners") {
    const ids = Array.isArray(value) ? value : typeof value === "string" && value ? value.split(" ") : [];
    return ids.length ? ids.map((id) => person(people, id)).join(", ") : t("org.audit.d.nobody");
  }
  return typeof value === "number" && value > 0 ? describeLifetime(value * 60) : t("org.audit.d.serviceLimit");
}

function policyWords(detail: Record<string, unknown>, people: People): string {
  const from = (detail.from ?? {}) as Record<string, unknown>;
  const to = (detail.to ?? {}) as Record<string, unknown>;
  const changed = Object.keys(SETTING_KEYS).filter((name) => name in to && JSON.stringify(from[name] ?? null) !== JSON.stringify(to[name] ?? null));
  return changed
    .map((name) => t("org.audit.d.change", { what: t(SETTING_KEYS[name]!), from: settingValue(name, from[name], people), to: settingValue(name, to[name], people) }))
    .join("; ");
}

/** The event's detail as a sentence; "" when there is nothing to say beyond the event's name. */
function wordsOf(event: OrgAuditEvent, people: People): string {
  const d = event.detail;
  switch (event.type) {
    case "organization-created":
      return str(d.name) ?? "";
    case "organization-renamed":
      return t("org.audit.d.fromTo", { from: str(d.from) ?? "", to: str(d.to) ?? "" });
    case "member-role-changed":
      return t("org.audit.d.roleChange", { person: person(people, d.userId), from: role(d.from), to: role(d.to) });
    case "member-added":
    case "member-removed":
    case "member-left":
      return t("org.audit.d.personRole", { person: person(people, d.userId), role: role(d.role) });
    case "invitation-sent":
    case "invitation-accepted":
      return t("org.audit.d.personRole", { person: isolated(str(d.email) ?? ""), role: role(d.role) });
    case "invitation-resent":
    case "invitation-revoked":
      return isolated(str(d.email) ?? "");
    case "domain-added":
    case "domain-verified":
    case "domain-failed":
    case "domain-removed":
      return isolated(str(d.domain) ?? "");
    case "policy-changed":
      return policyWords(d, people);
    case "sso-sessions-ended":
      return t("org.audit.d.sessions", { n: typeof d.sessions === "number" ? d.sessions : 0 });
    case "scim-token-created":
    case "saml-connection-added":
      return str(d.name) ?? isolated(str(d.idpEntityId) ?? "");
    case "oidc-connection-added":
      return isolated(str(d.issuer) ?? "");
    case "scim-group-created":
    case "scim-group-updated":
    case "scim-group-deleted":
      return str(d.displayName) ?? "";
    case "scim-user-created":
    case "scim-user-updated":
    case "scim-user-deactivated":
    case "scim-user-reactivated":
    case "scim-user-deleted":
      return person(people, d.userId);
    case "saml-idp-initiated-changed":
      return t(d.on ? "org.audit.d.on" : "org.audit.d.off");
    default:
      return "";
  }
}

/** The page's events, each with its detail in words, the people they name looked up once. */
export async function withWords(events: OrgAuditEvent[]): Promise<(OrgAuditEvent & { words: string })[]> {
  const ids = new Set<string>();
  for (const e of events) {
    if (typeof e.detail.userId === "string") ids.add(e.detail.userId);
    for (const side of [e.detail.from, e.detail.to]) {
      const owners = (side as Record<string, unknown> | undefined)?.breakGlassOwners;
      if (Array.isArray(owners)) for (const id of owners) if (typeof id === "string") ids.add(id);
    }
  }
  const users = ids.size ? await db().user.findMany({ where: { id: { in: [...ids] } }, select: { id: true, email: true } }) : [];
  const people: People = new Map(users.filter((u) => u.email).map((u) => [u.id, u.email!]));
  return events.map((e) => ({ ...e, words: wordsOf(e, people) }));
}
