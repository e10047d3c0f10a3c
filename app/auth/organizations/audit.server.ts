// The organization's audit log (ADR 150): every change to an organization — its name, members,
// roles, invitations, domains — is one OrganizationAuditEvent naming who made it, written in the
// transaction of the change. Read paged on /orgs/<slug>/audit and downloaded as JSON or CSV.
import { db } from "../../db/client.server";

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];
type Writer = Tx | ReturnType<typeof db>;

/** Who made a change: a signed-in user (their id and address as of the change), and from where. */
export type OrgActor = { userId: string | null; email: string | null; ip: string | null };

export const ORG_EVENT_TYPES = [
  "organization-created",
  "organization-renamed",
  "member-added",
  "member-role-changed",
  "member-removed",
  "member-left",
  "invitation-sent",
  "invitation-resent",
  "invitation-revoked",
  "invitation-accepted",
  "domain-added",
  "domain-verified",
  "domain-failed",
  "domain-removed",
  "scim-token-created",
  "scim-token-revoked",
  "scim-user-created",
  "scim-user-updated",
  "scim-user-deactivated",
  "scim-user-reactivated",
  "scim-user-deleted",
  "scim-group-created",
  "scim-group-updated",
  "scim-group-deleted",
  "saml-connection-added",
  "saml-connection-removed",
  "oidc-connection-added",
  "oidc-connection-removed",
  "policy-changed",
  "break-glass-used",
  "sso-sessions-ended",
  "saml-certificate-added",
  "saml-certificate-removed",
  "saml-idp-initiated-changed",
] as const;
export type OrgEventType = (typeof ORG_EVENT_TYPES)[number];

/** Events per page of /orgs/<slug>/audit; the downloads hold at most DOWNLOAD_MAX. */
export const AUDIT_PAGE_SIZE = 50;
export const AUDIT_DOWNLOAD_MAX = 10_000;

export async function recordOrgEvent(writer: Writer, organizationId: string, actor: OrgActor, type: OrgEventType, detail: Record<string, unknown> = {}) {
  await writer.organizationAuditEvent.create({
    data: {
      organizationId,
      actorId: actor.userId,
      actorEmail: actor.email,
      ip: actor.ip,
      type,
      detail: Object.keys(detail).length ? JSON.stringify(detail) : null,
    },
  });
}

export type OrgAuditEvent = { id: string; at: string; type: string; actorId: string | null; actorEmail: string | null; ip: string | null; detail: Record<string, unknown> };

function shape(row: { id: string; at: Date; type: string; actorId: string | null; actorEmail: string | null; ip: string | null; detail: string | null }): OrgAuditEvent {
  let detail: Record<string, unknown> = {};
  try {
    const parsed: unknown = row.detail ? JSON.parse(row.detail) : {};
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) detail = parsed as Record<string, unknown>;
  } catch {
    detail = {};
  }
  return { id: row.id, at: row.at.toISOString(), type: row.type, actorId: row.actorId, actorEmail: row.actorEmail, ip: row.ip, detail };
}

/** One page (1-based) of the organization's events, newest first, and whether there is a next one. */
export async function orgEventPage(organizationId: string, page: number): Promise<{ events: OrgAuditEvent[]; page: number; hasNext: boolean }> {
  const rows = await db().organizationAuditEvent.findMany({
    where: { organizationId },
    orderBy: [{ at: "desc" }, { id: "desc" }],
    skip: (page - 1) * AUDIT_PAGE_SIZE,
    take: AUDIT_PAGE_SIZE + 1,
  });
  return { events: rows.slice(0, AUDIT_PAGE_SIZE).map(shape), page, hasNext: rows.length > AUDIT_PAGE_SIZE };
}

/** Every event of the organization for a download, newest first (at most AUDIT_DOWNLOAD_MAX). */
export async function orgEventsForDownload(organizationId: string): Promise<OrgAuditEvent[]> {
  const rows = await db().organizationAuditEvent.findMany({ where: { organizationId }, orderBy: [{ at: "desc" }, { id: "desc" }], take: AUDIT_DOWNLOAD_MAX });
  return rows.map(shape);
}

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break; and a cell a
 * spreadsheet would run as a formula (beginning with = + - @, or a tab or carriage return) gets a
 * leading apostrophe, so opening the download never runs what a member typed (OWASP CSV injection).
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const AUDIT_CSV_COLUMNS = ["at", "type", "actorId", "actorEmail", "ip", "detail"] as const;

/** The events as CSV text with a header line, lines ending in CRLF. */
export function orgEventsCsv(events: readonly OrgAuditEvent[]): string {
  const lines = [AUDIT_CSV_COLUMNS.join(",")];
  for (const e of events) {
    lines.push([e.at, e.type, e.actorId ?? "", e.actorEmail ?? "", e.ip ?? "", Object.keys(e.detail).length ? JSON.stringify(e.detail) : ""].map(csvCell).join(","));
  }
  return lines.join("\r\n") + "\r\n";
}
