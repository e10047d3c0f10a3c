// SCIM 2.0 provisioning at /scim/v2 (RFC 7643/7644; docs/features/scim.md, ADR 156-158). A bearer
// token names one organization; every lookup below is inside that organization, so another
// organization's user or group is 404, and a userName is unique per organization only (never a
// 409 about someone else's user). scimmy checks every resource against the standard schemas and
// applies PATCH operations; shapes.server.ts first turns what Entra ID and Okta send into the
// standard form. A request is atomic: everything is checked before one transaction writes it.
// Deprovisioning (active=false, DELETE) removes the membership and disables the person
// (app/auth/accounts/admin.server.ts disableUser): sign-in refused, every session ended on every
// instance within the revocation bound, in both session strategies.
import SCIMMY from "scimmy";
import { db } from "../../../db/client.server";
import { disabledByOtherThanScimOf, disableUser, enableUser } from "../../accounts/admin.server";
import { normalizeEmailAddress } from "../../core/email-address";
import { log } from "../../core/log.server";
import { revokeUserSessions } from "../../core/session.server";
import { recordOrgEvent, type OrgActor } from "../audit.server";
import { holdOrgLock, isUniqueViolation } from "../organizations.server";
import { dropBreakGlassOwner } from "../sso-sessions.server";
import { roleOfGroupName } from "./group-roles";
import { withBooleans, normalisePatch } from "./shapes.server";

export const SCIM_BASE_PATH = "/scim/v2";
const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
/** Most resources one list answer holds (also ServiceProviderConfig's filter.maxResults). */
export const SCIM_MAX_RESULTS = 200;
/** Most bytes of one request body. */
export const SCIM_MAX_BODY = 256 * 1024;

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

let configured = false;
function scimmy(): typeof SCIMMY {
  if (configured) return SCIMMY;
  SCIMMY.Config.set({
    documentationUri: undefined,
    patch: true,
    filter: { supported: true, maxResults: SCIM_MAX_RESULTS },
    bulk: false,
    changePassword: false,
    sort: false,
    etag: false,
    authenticationSchemes: [{ type: "oauthbearertoken", name: "Bearer token", description: "A provisioning token made on the organization's page" }],
  });
  SCIMMY.Resources.declare(SCIMMY.Resources.User.extend(SCIMMY.Schemas.EnterpriseUser, false));
  SCIMMY.Resources.declare(SCIMMY.Resources.Group);
  for (const resource of [SCIMMY.Resources.User, SCIMMY.Resources.Group, SCIMMY.Resources.ResourceType, SCIMMY.Resources.Schema, SCIMMY.Resources.ServiceProviderConfig]) resource.basepath(SCIM_BASE_PATH);
  configured = true;
  return SCIMMY;
}

/** A SCIM error: its status, scimType and a detail naming no other organization's data. */
export class ScimError extends Error {
  constructor(readonly status: number, readonly scimType: string | undefined, detail: string) {
    super(detail);
  }
}

const notFound = () => new ScimError(404, undefined, "Resource not found");

/** scimmy's refusals (SCIMMY.Types.Error, or a TypeError from coercing a value) as ScimError. */
function asScimError(error: unknown): ScimError {
  if (error instanceof ScimError) return error;
  if (error instanceof SCIMMY.Types.Error) return new ScimError(Number(error.status), error.scimType ?? undefined, error.message);
  if (error instanceof TypeError || error instanceof SyntaxError) return new ScimError(400, "invalidValue", error.message);
  throw error;
}

export type ScimContext = { organizationId: string; tokenId: string; actor: OrgActor };

// ---------------------------------------------------------------------------------------------
// Users

type UserRow = { id: string; userId: string; userName: string; externalId: string | null; active: boolean; resource: string; createdAt: Date; updatedAt: Date };

function parseStored(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function userResource(row: UserRow): Record<string, unknown> {
  const { id: _id, meta: _meta, schemas: _schemas, ...stored } = parseStored(row.resource);
  const resource: Record<string, unknown> = {
    ...stored,
    schemas: [USER_SCHEMA, ...(stored["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"] ? ["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"] : [])],
    id: row.id,
    userName: row.userName,
    active: row.active,
    meta: { resourceType: "User", created: row.createdAt.toISOString(), lastModified: row.updatedAt.toISOString(), location: `${SCIM_BASE_PATH}/Users/${row.id}` },
  };
  if (row.externalId !== null) resource.externalId = row.externalId;
  else delete resource.externalId;
  return resource;
}

/** The body checked against the User schema (scimmy), booleans first made booleans. */
function coerceUser(body: unknown): Record<string, unknown> {
  try {
    const normalised = withBooleans(body) as Record<string, unknown>;
    const schemas = Array.isArray(normalised?.schemas) ? normalised.schemas : [USER_SCHEMA];
    const instance = new (scimmy().Schemas.User)({ ...normalised, schemas, id: undefined, meta: undefined }, "in");
    return JSON.parse(JSON.stringify(instance)) as Record<string, unknown>;
  } catch (error) {
    throw asScimError(error);
  }
}

/**
 * Every address a SCIM user names: userName when it is one, and each of their e-mails (the primary
 * first). The first is the address the account gets.
 */
function addressesOfUser(resource: Record<string, unknown>): { first: string | null; all: string[]; malformed: boolean } {
  const emails = Array.isArray(resource.emails) ? (resource.emails as Record<string, unknown>[]) : [];
  const userName = typeof resource.userName === "string" ? normalizeEmailAddress(resource.userName) : null;
  const ordered = [...emails.filter((e) => e?.primary === true), ...emails.filter((e) => e?.primary !== true)].map((e) => e?.value);
  const all: string[] = userName?.ok ? [userName.address] : [];
  let malformed = false;
  for (const value of ordered) {
    const checked = typeof value === "string" ? normalizeEmailAddress(value) : null;
    if (checked?.ok) all.push(checked.address);
    else malformed = true;
  }
  return { first: all[0] ?? null, all: [...new Set(all)], malformed };
}

async function isVerifiedDomainOf(organizationId: string, address: string): Promise<boolean> {
  const domain = address.slice(address.lastIndexOf("@") + 1);
  return (await db().organizationDomain.findFirst({ where: { organizationId, verifiedDomain: domain }, select: { id: true } })) !== null;
}

/**
 * Provisioning manages only addresses in the organization's verified domains — every address the
 * resource names, not only the one the account gets (ADR 174): an `emails` entry on another
 * organization's domain is refused, never stored.
 */
async function requireManagedAddress(organizationId: string, resource: Record<string, unknown>): Promise<string> {
  const { first, all, malformed } = addressesOfUser(resource);
  if (!first) throw new ScimError(400, "invalidValue", "userName or emails must hold an e-mail address");
  if (malformed) throw new ScimError(400, "invalidValue", "Every value of emails must be an e-mail address");
  for (const address of all) {
    if (!(await isVerifiedDomainOf(organizationId, address))) throw new ScimError(400, "invalidValue", "Every address must be in one of the organization's verified domains");
  }
  return first;
}

function storedOf(resource: Record<string, unknown>): string {
  const { id: _id, meta: _meta, schemas: _schemas, active: _active, userName: _userName, externalId: _externalId, ...rest } = resource;
  return JSON.stringify(rest);
}

async function findUserRow(organizationId: string, id: string): Promise<UserRow> {
  const row = await db().scimUser.findFirst({ where: { id, organizationId } });
  if (!row) throw notFound();
  return row;
}

/**
 * The row a change (PUT, PATCH, DELETE) may act on: its account's address still on a domain this
 * organization verifies (ADR 174). An organization that lost a domain — now perhaps another's —
 * no longer disables or rewrites the accounts on it: 404, as for another organization's id.
 */
async function findManagedUserRow(organizationId: string, id: string): Promise<UserRow> {
  const row = await findUserRow(organizationId, id);
  const account = await db().user.findUnique({ where: { id: row.userId }, select: { email: true } });
  if (!account?.email || !(await isVerifiedDomainOf(organizationId, account.email))) throw notFound();
  return row;
}

/** A write that lost a race to a unique key (two creates of one userName at once) is the 409 the first check gives. */
async function uniqueAsConflict<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw new ScimError(409, "uniqueness", "A user with this userName is already provisioned in this organization");
    throw error;
  }
}

/** The role a provisioned person's membership gets from their groups: admin when any group says so. */
async function roleFromGroups(tx: Tx, scimUserId: string): Promise<"admin" | "member"> {
  const admin = await tx.scimGroupMember.count({ where: { scimUserId, group: { role: "admin" } } });
  return admin > 0 ? "admin" : "member";
}

/** Inside a transaction: the membership follows the SCIM user (present when active, its role from the groups; never an owner's role touched). */
async function syncMembership(tx: Tx, ctx: ScimContext, scimUserId: string): Promise<void> {
  const row = await tx.scimUser.findUnique({ where: { id: scimUserId }, select: { userId: true, active: true } });
  if (!row) return;
  const membership = await tx.membership.findUnique({ where: { organizationId_userId: { organizationId: ctx.organizationId, userId: row.userId } } });
  if (!row.active) {
    if (!membership) return;
    // The organization's lock, as every removal takes it: "one owner always" holds under concurrent changes.
    if (membership.role === "owner") await holdOrgLock(tx, ctx.organizationId);
    await refuseLastOwner(tx, ctx.organizationId, membership);
    await tx.membership.delete({ where: { id: membership.id } });
    await tx.session.updateMany({ where: { userId: row.userId, organizationId: ctx.organizationId }, data: { organizationId: null } });
    await recordOrgEvent(tx, ctx.organizationId, ctx.actor, "member-removed", { userId: row.userId, role: membership.role, source: "scim" });
    // No longer an owner, so no longer a break-glass owner (their sessions end with the account's disabling).
    if (membership.role === "owner") await dropBreakGlassOwner(tx, ctx.organizationId, row.userId, ctx.actor);
    return;
  }
  const role = await roleFromGroups(tx, scimUserId);
  if (!membership) {
    await tx.membership.create({ data: { organizationId: ctx.organizationId, userId: row.userId, role } });
    await recordOrgEvent(tx, ctx.organizationId, ctx.actor, "member-added", { userId: row.userId, role, source: "scim" });
  } else if (membership.role !== "owner" && membership.role !== role) {
    await tx.membership.update({ where: { id: membership.id }, data: { role } });
    await recordOrgEvent(tx, ctx.organizationId, ctx.actor, "member-role-changed", { userId: row.userId, from: membership.role, to: role, source: "scim" });
  }
}

/** The organization always keeps one owner: its last owner is never deprovisioned through SCIM. */
async function refuseLastOwner(tx: Tx, organizationId: string, membership: { id: string; role: string }) {
  if (membership.role !== "owner") return;
  const others = await tx.membership.count({ where: { organizationId, role: "owner", id: { not: membership.id } } });
  if (others === 0) throw new ScimError(400, "mutability", "The organization's last owner cannot be deprovisioned");
}

/** After the transaction: a person made inactive is disabled (sessions end everywhere); made active again, enabled. */
async function applyAccountState(ctx: ScimContext, userId: string, before: boolean | null, after: boolean | null) {
  const actor = { source: "scim", organizationId: ctx.organizationId, tokenId: ctx.tokenId } as const;
  if (before !== false && after === false) await disableUser({ id: userId }, actor);
  if (before === false && after === true) await enableUser({ id: userId }, actor);
}

export async function listUsers(ctx: ScimContext, url: URL) {
  const { startIndex, count } = paging(url);
  const filter = url.searchParams.get("filter");
  const where: Record<string, unknown> = { organizationId: ctx.organizationId };
  let rest: InstanceType<typeof SCIMMY.Types.Filter> | null = null;
  if (filter) {
    const simple = /^\s*(userName|externalId)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(filter);
    if (simple) {
      const value = simple[2]!.replace(/\\(.)/g, "$1");
      if (simple[1]!.toLowerCase() === "username") where.userNameKey = value.toLowerCase();
      else where.externalId = value;
    } else {
      try {
        rest = new (scimmy().Types.Filter)(filter);
      } catch (error) {
        throw new ScimError(400, "invalidFilter", asScimError(error).message);
      }
    }
  }
  if (!rest) {
    const [total, rows] = await Promise.all([db().scimUser.count({ where }), db().scimUser.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }], skip: startIndex - 1, take: count })]);
    return listPage(rows.map(userResource), total, startIndex);
  }
  const rows = await db().scimUser.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return listResponse(rest.match(rows.map(userResource)), startIndex, count);
}

export async function getUser(ctx: ScimContext, id: string) {
  return userResource(await findUserRow(ctx.organizationId, id));
}

export async function createUser(ctx: ScimContext, body: unknown) {
  const resource = coerceUser(body);
  const address = await requireManagedAddress(ctx.organizationId, resource);
  const userName = String(resource.userName);
  const active = resource.active !== false;
  const result = await uniqueAsConflict(() => db().$transaction(async (tx) => {
    const taken = await tx.scimUser.findFirst({ where: { organizationId: ctx.organizationId, userNameKey: userName.toLowerCase() }, select: { id: true } });
    if (taken) throw new ScimError(409, "uniqueness", "A user with this userName is already provisioned in this organization");
    const existing = await tx.user.findUnique({ where: { email: address }, select: { id: true, emailVerified: true } });
    const account = existing ?? (await tx.user.create({ data: { email: address, name: displayNameOf(resource) }, select: { id: true } }));
    // An existing account whose address was never verified proves nobody: it may be a squatter's,
    // made before the organization's person arrived. The directory is authoritative for its
    // verified domain, so it takes the account over, and everything its unproven holder set up
    // goes (ADR 174); its sessions end once this commits.
    const takenOver = existing !== null && existing.emailVerified === null;
    if (takenOver) await clearUnprovenAccount(tx, account.id, address);
    // The same account provisioned under another userName of this organization: still this organization's own conflict.
    const twice = await tx.scimUser.findFirst({ where: { organizationId: ctx.organizationId, userId: account.id }, select: { id: true } });
    if (twice) throw new ScimError(409, "uniqueness", "This person is already provisioned in this organization");
    const row = await tx.scimUser.create({
      data: { organizationId: ctx.organizationId, userId: account.id, userName, userNameKey: userName.toLowerCase(), externalId: typeof resource.externalId === "string" ? resource.externalId : null, active, resource: storedOf(resource) },
    });
    await recordOrgEvent(tx, ctx.organizationId, ctx.actor, "scim-user-created", { scimId: row.id, userId: account.id, ...(takenOver ? { takenOver: "unverified-account" } : {}) });
    await syncMembership(tx, ctx, row.id);
    return { ...row, takenOver };
  }));
  if (result.takenOver) {
    await revokeUserSessions(result.userId);
    log("warn", "scim-took-over-unverified-account", { organizationId: ctx.organizationId, userId: result.userId });
  }
  // An account a site admin disabled stays disabled: creating it here never enables it.
  await applyAccountState(ctx, result.userId, null, active);
  return userResource(result);
}

/**
 * Inside the transaction: what the unproven holder of an account set up goes — password, passkeys,
 * linked providers, second factor and recovery codes, pending e-mail links and codes, and what they
 * allowed apps through the OAuth provider. The person the directory names starts clean (an e-mail
 * sign-in, their company sign-in, or a reset sets their own).
 */
async function clearUnprovenAccount(tx: Tx, userId: string, address: string): Promise<void> {
  await tx.password.deleteMany({ where: { userId } });
  await tx.passkey.deleteMany({ where: { userId } });
  await tx.account.deleteMany({ where: { userId } });
  await tx.twoFactorCredential.deleteMany({ where: { userId } });
  await tx.recoveryCode.deleteMany({ where: { userId } });
  await tx.verificationToken.deleteMany({ where: { OR: [{ userId }, { identifier: address }] } });
  const grants = (await tx.oAuthPayload.findMany({ where: { kind: "Grant", accountId: userId }, select: { id: true } })).map((g) => g.id);
  await tx.oAuthPayload.deleteMany({ where: { OR: [{ accountId: userId }, ...(grants.length ? [{ grantId: { in: grants } }] : [])] } });
}

/** Writes `resource` over the user `id` (PUT, and PATCH once applied). */
async function writeUser(ctx: ScimContext, current: UserRow, resource: Record<string, unknown>) {
  const address = await requireManagedAddress(ctx.organizationId, resource);
  const userName = String(resource.userName);
  // Reactivating an account an operator (or another organization's directory) disabled is not
  // this directory's to do (ADR 175): the person stays inactive here — no membership, and the
  // answer says active false — until an operator enables the account.
  const active = resource.active !== false && !(current.active === false && (await disabledByOtherThanScimOf(current.userId, ctx.organizationId)));
  const row = await uniqueAsConflict(() => db().$transaction(async (tx) => {
    if (userName.toLowerCase() !== current.userName.toLowerCase()) {
      const taken = await tx.scimUser.findFirst({ where: { organizationId: ctx.organizationId, userNameKey: userName.toLowerCase(), id: { not: current.id } }, select: { id: true } });
      if (taken) throw new ScimError(409, "uniqueness", "A user with this userName is already provisioned in this organization");
    }
    const account = await tx.user.findUnique({ where: { id: current.userId }, select: { email: true } });
    if (account && account.email !== address) {
      const holder = await tx.user.findUnique({ where: { email: address }, select: { id: true } });
      if (holder) throw new ScimError(400, "invalidValue", "The new address already belongs to another account");
      await tx.user.update({ where: { id: current.userId }, data: { email: address, emailVerified: null } });
    }
    const updated = await tx.scimUser.update({
      where: { id: current.id },
      data: { userName, userNameKey: userName.toLowerCase(), externalId: typeof resource.externalId === "string" ? resource.externalId : null, active, resource: storedOf(resource) },
    });
    if (current.active !== active) await recordOrgEvent(tx, ctx.organizationId, ctx.actor, active ? "scim-user-reactivated" : "scim-user-deactivated", { scimId: current.id, userId: current.userId });
    else await recordOrgEvent(tx, ctx.organizationId, ctx.actor, "scim-user-updated", { scimId: current.id, userId: current.userId });
    await syncMembership(tx, ctx, current.id);
    return updated;
  }));
  await applyAccountState(ctx, current.userId, current.active, active);
  return userResource(row);
}

export async function replaceUser(ctx: ScimContext, id: string, body: unknown) {
  const current = await findManagedUserRow(ctx.organizationId, id);
  return writeUser(ctx, current, coerceUser(body));
}

export async function patchUser(ctx: ScimContext, id: string, body: unknown) {
  const current = await findManagedUserRow(ctx.organizationId, id);
  const now = userResource(current);
  const patched = await applyPatch(scimmy().Schemas.User, now, body);
  if (!patched) return now;
  return writeUser(ctx, current, patched);
}

export async function deleteUser(ctx: ScimContext, id: string) {
  const current = await findManagedUserRow(ctx.organizationId, id);
  await db().$transaction(async (tx) => {
    await tx.scimUser.update({ where: { id: current.id }, data: { active: false } });
    await syncMembership(tx, ctx, current.id);
    await tx.scimUser.delete({ where: { id: current.id } });
    await recordOrgEvent(tx, ctx.organizationId, ctx.actor, "scim-user-deleted", { scimId: current.id, userId: current.userId });
  });
  await applyAccountState(ctx, current.userId, current.active ? true : null, false);
}

function displayNameOf(resource: Record<string, unknown>): string | null {
  if (typeof resource.displayName === "string" && resource.displayName.trim()) return resource.displayName.trim().slice(0, 100);
  const name = resource.name as { formatted?: unknown; givenName?: unknown; familyName?: unknown } | undefined;
  if (typeof name?.formatted === "string" && name.formatted.trim()) return name.formatted.trim().slice(0, 100);
  const joined = [name?.givenName, name?.familyName].filter((p): p is string => typeof p === "string" && p.trim() !== "").join(" ");
  return joined ? joined.slice(0, 100) : null;
}

/** The PATCH body applied (through the shapes layer, then scimmy) to `now`; undefined when nothing changes. */
async function applyPatch(schema: typeof SCIMMY.Schemas.User | typeof SCIMMY.Schemas.Group, now: Record<string, unknown>, body: unknown): Promise<Record<string, unknown> | undefined> {
  try {
    const raw = (body ?? {}) as { schemas?: unknown; Operations?: unknown };
    const message = new (scimmy().Messages.PatchOp)({ ...raw, Operations: normalisePatch(raw.Operations, now) } as ConstructorParameters<typeof SCIMMY.Messages.PatchOp>[0]);
    const instance = new schema({ ...now, meta: undefined }, "in");
    const result = await message.apply(instance);
    return result ? (JSON.parse(JSON.stringify(result)) as Record<string, unknown>) : undefined;
  } catch (error) {
    throw asScimError(error);
  }
}

// ---------------------------------------------------------------------------------------------
// Groups: each maps to a membership role (ADR 157)


type GroupRow = { id: string; displayName: string; externalId: string | null; createdAt: Date; updatedAt: Date; members: { scimUser: { id: string; userName: string } }[] };
const groupSelect = { id: true, displayName: true, externalId: true, createdAt: true, updatedAt: true, members: { select: { scimUser: { select: { id: true, userName: true } } } } } as const;

function groupResource(row: GroupRow, excludeMembers = false): Record<string, unknown> {
  const resource: Record<string, unknown> = {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    displayName: row.displayName,
    meta: { resourceType: "Group", created: row.createdAt.toISOString(), lastModified: row.updatedAt.toISOString(), location: `${SCIM_BASE_PATH}/Groups/${row.id}` },
  };
  if (row.externalId !== null) resource.externalId = row.externalId;
  if (!excludeMembers) resource.members = row.members.map((m) => ({ value: m.scimUser.id, display: m.scimUser.userName, $ref: `${SCIM_BASE_PATH}/Users/${m.scimUser.id}`, type: "User" }));
  return resource;
}

function coerceGroup(body: unknown): Record<string, unknown> {
  try {
    const normalised = withBooleans(body) as Record<string, unknown>;
    const instance = new (scimmy().Schemas.Group)({ ...normalised, schemas: [GROUP_SCHEMA], id: undefined, meta: undefined }, "in");
    return JSON.parse(JSON.stringify(instance)) as Record<string, unknown>;
  } catch (error) {
    throw asScimError(error);
  }
}

async function findGroupRow(organizationId: string, id: string): Promise<GroupRow> {
  const row = await db().scimGroup.findFirst({ where: { id, organizationId }, select: groupSelect });
  if (!row) throw notFound();
  return row;
}

/** The member ids of a group resource, each a user of this organization (else the whole request is refused). */
async function memberIds(organizationId: string, resource: Record<string, unknown>): Promise<string[]> {
  const members = Array.isArray(resource.members) ? (resource.members as { value?: unknown }[]) : [];
  const ids = [...new Set(members.map((m) => (typeof m?.value === "string" ? m.value : "")))];
  if (ids.some((id) => !id)) throw new ScimError(400, "invalidValue", "Every member needs a value");
  if (ids.length === 0) return [];
  const found = await db().scimUser.count({ where: { organizationId, id: { in: ids } } });
  if (found !== ids.length) throw new ScimError(400, "invalidValue", "A member is not a user of this organization");
  return ids;
}

async function writeGroup(ctx: ScimContext, groupId: string | null, resource: Record<string, unknown>, members: string[]) {
  const displayName = String(resource.displayName);
  const externalId = typeof resource.externalId === "string" ? resource.externalId : null;
  const id = await db().$transaction(async (tx) => {
    const before = groupId ? (await tx.scimGroupMember.findMany({ where: { groupId }, select: { scimUserId: true } })).map((m) => m.scimUserId) : [];
    const group = groupId
      ? await tx.scimGroup.update({ where: { id: groupId }, data: { displayName, externalId, role: roleOfGroupName(displayName) } })
      : await tx.scimGroup.create({ data: { organizationId: ctx.organizationId, displayName, externalId, role: roleOfGroupName(displayName) } });
    await tx.scimGroupMember.deleteMany({ where: { groupId: group.id, scimUserId: { notIn: members } } });
    for (const scimUserId of members.filter((m) => !before.includes(m))) await tx.scimGroupMember.create({ data: { groupId: group.id, scimUserId } });
    await recordOrgEvent(tx, ctx.organizationId, ctx.actor, groupId ? "scim-group-updated" : "scim-group-created", { scimId: group.id, displayName, role: group.role, members: members.length });
    for (const scimUserId of new Set([...before, ...members])) await syncMembership(tx, ctx, scimUserId);
    return group.id;
  });
  return groupResource(await findGroupRow(ctx.organizationId, id));
}

export async function listGroups(ctx: ScimContext, url: URL) {
  const { startIndex, count } = paging(url);
  const filter = url.searchParams.get("filter");
  const excludeMembers = /(^|,)\s*members\s*(,|$)/i.test(url.searchParams.get("excludedAttributes") ?? "");
  const where: Record<string, unknown> = { organizationId: ctx.organizationId };
  if (filter) {
    const simple = /^\s*(displayName|externalId)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(filter);
    if (!simple) throw new ScimError(400, "invalidFilter", "Groups are filtered by displayName eq or externalId eq");
    where[simple[1]!.toLowerCase() === "displayname" ? "displayName" : "externalId"] = simple[2]!.replace(/\\(.)/g, "$1");
  }
  const rows = await db().scimGroup.findMany({ where, select: groupSelect, orderBy: { createdAt: "asc" } });
  return listResponse(rows.map((r) => groupResource(r, excludeMembers)), startIndex, count);
}

export async function getGroup(ctx: ScimContext, id: string, url: URL) {
  const excludeMembers = /(^|,)\s*members\s*(,|$)/i.test(url.searchParams.get("excludedAttributes") ?? "");
  return groupResource(await findGroupRow(ctx.organizationId, id), excludeMembers);
}

export async function createGroup(ctx: ScimContext, body: unknown) {
  const resource = coerceGroup(body);
  return writeGroup(ctx, null, resource, await memberIds(ctx.organizationId, resource));
}

export async function replaceGroup(ctx: ScimContext, id: string, body: unknown) {
  await findGroupRow(ctx.organizationId, id);
  const resource = coerceGroup(body);
  return writeGroup(ctx, id, resource, await memberIds(ctx.organizationId, resource));
}

export async function patchGroup(ctx: ScimContext, id: string, body: unknown) {
  const row = await findGroupRow(ctx.organizationId, id);
  const now = groupResource(row);
  const patched = await applyPatch(scimmy().Schemas.Group, now, body);
  if (!patched) return now;
  return writeGroup(ctx, id, patched, await memberIds(ctx.organizationId, patched));
}

export async function deleteGroup(ctx: ScimContext, id: string) {
  const row = await findGroupRow(ctx.organizationId, id);
  await db().$transaction(async (tx) => {
    await tx.scimGroup.delete({ where: { id: row.id } });
    await recordOrgEvent(tx, ctx.organizationId, ctx.actor, "scim-group-deleted", { scimId: row.id, displayName: row.displayName });
    for (const m of row.members) await syncMembership(tx, ctx, m.scimUser.id);
  });
}

// ---------------------------------------------------------------------------------------------
// Lists and discovery

function paging(url: URL): { startIndex: number; count: number } {
  const start = Number.parseInt(url.searchParams.get("startIndex") ?? "1", 10);
  const count = Number.parseInt(url.searchParams.get("count") ?? String(SCIM_MAX_RESULTS), 10);
  return { startIndex: Number.isFinite(start) && start >= 1 ? start : 1, count: Number.isFinite(count) ? Math.min(Math.max(count, 0), SCIM_MAX_RESULTS) : SCIM_MAX_RESULTS };
}

function listResponse(resources: Record<string, unknown>[], startIndex: number, count: number) {
  return listPage(resources.slice(startIndex - 1, startIndex - 1 + count), resources.length, startIndex);
}

function listPage(page: Record<string, unknown>[], totalResults: number, startIndex: number) {
  return { schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], totalResults, startIndex, itemsPerPage: page.length, Resources: page };
}

export async function serviceProviderConfig() {
  return JSON.parse(JSON.stringify(await new (scimmy().Resources.ServiceProviderConfig)().read())) as Record<string, unknown>;
}

export async function resourceTypes(id?: string) {
  try {
    return JSON.parse(JSON.stringify(await new (scimmy().Resources.ResourceType)(id).read())) as Record<string, unknown>;
  } catch (error) {
    throw asScimError(error);
  }
}

export async function schemas(id?: string) {
  try {
    return JSON.parse(JSON.stringify(await new (scimmy().Resources.Schema)(id).read())) as Record<string, unknown>;
  } catch (error) {
    throw asScimError(error);
  }
}
