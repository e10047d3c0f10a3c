// OpenID Connect connections of an organization (ADR 151): reading them (the client secret opened
// from its seal), adding one after its issuer's discovery answered with exactly that issuer,
// removing one (its identities go, and every session they started ends), and finding the ones of
// a domain for the sign-in page. Used by the organization page and `npm run oidc:connection`.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { db } from "../../db/client.server";
import { getConfig, type AuthConfig } from "../core/config.server";
import { log } from "../core/log.server";
import { checkPublicHost, PublicFetchError, type PublicFetchSeam } from "../core/public-fetch.server";
import { openAtRestDetail, resealStale, sealAtRest, type SealedColumn } from "../core/sealed-at-rest.server";
import { endSessionsStartedWith } from "../core/session.server";
import { discover, insecureAllowed, outboundBudget, OutboundError } from "../oauth/http.server";
import { recordOrgEvent } from "../organizations/audit.server";
import type { MemberContext } from "../organizations/organizations.server";
import { atLeast, isOrgRole, type OrgRole } from "../organizations/roles";
import { oidcCallbackPath, oidcCredentialRef, oidcSignInPath } from "./paths";

export type OidcConnectionRow = {
  id: string;
  organizationId: string;
  organizationName: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  domains: string[];
  defaultRole: OrgRole;
  /** Added by the operator's CLI: its issuer and endpoints may be private addresses (ADR 164 amended). */
  allowPrivateAddress: boolean;
};

const SEAL_PURPOSE = "oidc-connection-client-secret";
const placeOf = (connectionId: string) => ({ purpose: SEAL_PURPOSE, row: connectionId });

/** The connection with its client secret opened; null when unknown or the secret no configured AUTH_SECRET opens. */
export async function findOidcConnection(id: string, config: AuthConfig = getConfig()): Promise<OidcConnectionRow | null> {
  const row = await db().oidcConnection.findUnique({ where: { id }, include: { organization: { select: { name: true } } } });
  if (!row) return null;
  const opened = await openAtRestDetail(row.clientSecretSealed, placeOf(row.id), config.secrets);
  if (!opened) {
    // Sealed under an AUTH_SECRET value no longer configured: the connection cannot sign anyone in.
    log("warn", "oidc-connection-secret-unopenable", { connectionId: row.id });
    return null;
  }
  // Sealed before AUTH_SECRET was rotated: written back sealed with the first value (ADR 109).
  if (!opened.current) {
    await resealStale(row.clientSecretSealed, opened.value, placeOf(row.id), config.secrets, async (sealed) => {
      const { count } = await db().oidcConnection.updateMany({ where: { id: row.id, clientSecretSealed: row.clientSecretSealed }, data: { clientSecretSealed: sealed } });
      return count;
    });
  }
  return {
    id: row.id,
    organizationId: row.organizationId,
    organizationName: row.organization.name,
    issuer: row.issuer,
    clientId: row.clientId,
    clientSecret: opened.value,
    domains: row.domains.split(/\s+/).filter(Boolean),
    defaultRole: isOrgRole(row.defaultRole) && row.defaultRole !== "owner" ? row.defaultRole : "member",
    allowPrivateAddress: row.allowPrivateAddress,
  };
}

/** How long the public-address check of one host may take. */
const HOST_CHECK_MS = 5_000;
let resolverSeam: PublicFetchSeam | null = null;
/** Tests only: a fake resolver for the public-address check (refused in production). */
export function setOidcHostCheckTestSeam(next: PublicFetchSeam | null) {
  if (next && process.env.NODE_ENV === "production") throw new Error("The OpenID Connect host check test seam is not available in production");
  resolverSeam = next;
}

/**
 * Why the server may not fetch `url` for a connection (null: it may). Server-side request forgery
 * (ADR 164 amended): an organization admin names the issuer, and its discovery names the other
 * endpoints, so a connection added from the organization page reaches only https URLs whose host
 * resolves to public addresses — and http only to a loopback IdP outside production (development
 * and tests). A connection the operator added with the CLI (`allowPrivateAddress`) may name any
 * https or loopback http URL: the operator is trusted with their own network.
 */
export async function urlRefusal(url: string, allowPrivateAddress: boolean, config: Pick<AuthConfig, "production">): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not a URL";
  }
  if (parsed.protocol === "http:") {
    if (!insecureAllowed(parsed)) return "must be an https URL";
    if (!allowPrivateAddress && config.production) return "must be an https URL (http only reaches a local identity provider outside production)";
    return null;
  }
  if (parsed.protocol !== "https:") return "must be an https URL";
  if (allowPrivateAddress) return null;
  try {
    await checkPublicHost(parsed.hostname, HOST_CHECK_MS, resolverSeam);
    return null;
  } catch (error) {
    if (error instanceof PublicFetchError) return error.reason === "forbidden_address" ? "its host is not a public address" : `its host: ${error.reason}`;
    throw error;
  }
}

/** The discovered endpoints the server itself calls (token, keys, userinfo), each under urlRefusal. */
export async function endpointsRefusal(as: { token_endpoint?: string; jwks_uri?: string; userinfo_endpoint?: string }, allowPrivateAddress: boolean, config: Pick<AuthConfig, "production">): Promise<string | null> {
  for (const [name, url] of [["token_endpoint", as.token_endpoint], ["jwks_uri", as.jwks_uri], ["userinfo_endpoint", as.userinfo_endpoint]] as const) {
    if (!url) continue;
    const refused = await urlRefusal(url, allowPrivateAddress, config);
    if (refused) return `${name} ${refused}`;
  }
  return null;
}

/** Every connection's sealed client secret, for `npm run secret:reseal`; rows by id. */
export const oidcConnectionSecretColumn: SealedColumn = {
  kind: "oidc-connection-client-secret",
  page: async (after, take) =>
    (
      await db().oidcConnection.findMany({
        where: after === null ? {} : { id: { gt: after } },
        orderBy: { id: "asc" },
        take,
        select: { id: true, clientSecretSealed: true },
      })
    ).map((row) => ({ id: row.id, sealed: row.clientSecretSealed, at: placeOf(row.id) })),
  replace: async (id, sealed, next) => (await db().oidcConnection.updateMany({ where: { id, clientSecretSealed: sealed }, data: { clientSecretSealed: next } })).count,
  reread: async (id) => {
    const row = await db().oidcConnection.findUnique({ where: { id }, select: { clientSecretSealed: true } });
    return row ? { sealed: row.clientSecretSealed, at: placeOf(id) } : null;
  },
};

export const NewOidcConnection = z.object({
  organizationId: z.string().min(1),
  issuer: z.url({ protocol: /^https?$/ }).max(1024),
  clientId: z.string().trim().min(1).max(512),
  clientSecret: z.string().min(1).max(4096),
  domains: z.array(z.string().min(1)).min(1),
  defaultRole: z.enum(["admin", "member"]).default("member"),
  /** The operator's CLI only: the issuer may be on a private or loopback address (ADR 164 amended). */
  allowPrivateAddress: z.boolean().default(false),
  /** Tests only: the id the IdP's registered redirect URI already names. */
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional(),
});

/** Why adding a connection was refused: a field, or the issuer's discovery (with the cause for the operator). */
export type AddRefusal = { field: "input" | "domains" | "issuer" | "address"; detail: string };

/**
 * Whether `issuer` answers discovery naming exactly itself (the pin), over the outbound fetch
 * with its proxy settings and time budget, and names endpoints the server may call. Null when it
 * does; otherwise what went wrong (also logged, without any secret: the organization page shows
 * only that discovery failed).
 */
export async function checkDiscovery(issuer: string, config: AuthConfig = getConfig(), allowPrivateAddress = false): Promise<string | null> {
  const refused = await (async () => {
    try {
      const as = await discover(issuer, issuer, outboundBudget(config));
      const endpoints = await endpointsRefusal(as, allowPrivateAddress, config);
      return endpoints ? `discovery names an endpoint the server may not call: ${endpoints}` : null;
    } catch (error) {
      if (error instanceof OutboundError) return `${error.failure} at discovery: ${error.message}`;
      return error instanceof Error ? error.message : String(error);
    }
  })();
  if (refused) log("warn", "oidc-connection-discovery-failed", { issuer, reason: refused });
  return refused;
}

/** Adds a connection: each domain verified by the organization, and the issuer's discovery pinned to it. */
export async function addOidcConnection(input: z.input<typeof NewOidcConnection>, config: AuthConfig = getConfig()): Promise<{ ok: true; id: string } | { ok: false; reason: AddRefusal }> {
  const parsed = NewOidcConnection.safeParse(input);
  if (!parsed.success) return { ok: false, reason: { field: "input", detail: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") } };
  const value = parsed.data;
  // Where the server will fetch from: checked before anything is fetched (ADR 164 amended).
  const issuerRefused = await urlRefusal(value.issuer, value.allowPrivateAddress, config);
  if (issuerRefused) {
    log("warn", "oidc-connection-issuer-refused", { issuer: value.issuer, reason: issuerRefused });
    return { ok: false, reason: { field: "address", detail: `the issuer ${issuerRefused}` } };
  }
  const domains = [...new Set(value.domains.map((d) => d.trim().toLowerCase()))];
  const verified = await db().organizationDomain.findMany({ where: { organizationId: value.organizationId, state: "verified", verifiedDomain: { in: domains } } });
  if (verified.length !== domains.length) return { ok: false, reason: { field: "domains", detail: "each must be verified by the organization" } };
  const discovery = await checkDiscovery(value.issuer, config, value.allowPrivateAddress);
  if (discovery) return { ok: false, reason: { field: "issuer", detail: discovery } };
  const id = value.id ?? randomUUID();
  await db().oidcConnection.create({
    data: {
      id,
      organizationId: value.organizationId,
      issuer: value.issuer,
      clientId: value.clientId,
      // Sealed for this row: a copy moved to another row does not open.
      clientSecretSealed: await sealAtRest(value.clientSecret, placeOf(id), config.secrets),
      domains: domains.join(" "),
      defaultRole: value.defaultRole,
      allowPrivateAddress: value.allowPrivateAddress,
    },
  });
  return { ok: true, id };
}

/**
 * Removes a connection (of `organizationId` when given): its identities go with it, and every
 * session one of them started ends (on every instance). Returns the organization it belonged to.
 */
export async function removeOidcConnection(id: string, organizationId?: string): Promise<{ organizationId: string } | null> {
  // The identities read and the connection (with them) deleted in one transaction: no identity
  // made meanwhile is left with a session nobody ends.
  const removed = await db().$transaction(async (tx) => {
    const row = await tx.oidcConnection.findFirst({ where: { id, ...(organizationId ? { organizationId } : {}) }, include: { identities: { select: { id: true, userId: true } } } });
    if (!row) return null;
    const { count } = await tx.oidcConnection.deleteMany({ where: { id: row.id } });
    return count === 1 ? row : null;
  });
  if (!removed) return null;
  for (const identity of removed.identities) await endSessionsStartedWith(identity.userId, oidcCredentialRef(identity.id));
  return { organizationId: removed.organizationId };
}

export type OidcConnectionRefusal = "forbidden" | "not-found" | "invalid" | "domains" | "discovery" | "address";

/** An admin or owner adds a connection from the organization page; audited. */
export async function addOidcConnectionAs(
  ctx: MemberContext,
  input: { issuer: string; clientId: string; clientSecret: string; domains: string[]; defaultRole: string },
): Promise<{ ok: true; id: string } | { ok: false; reason: OidcConnectionRefusal; detail?: string }> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const role = input.defaultRole === "admin" || input.defaultRole === "member" ? input.defaultRole : null;
  if (!role) return { ok: false, reason: "invalid" };
  const issuer = input.issuer.trim();
  // Never a private address from the page: an organization admin is not the operator (ADR 164 amended).
  const result = await addOidcConnection({ organizationId: ctx.organization.id, issuer, clientId: input.clientId, clientSecret: input.clientSecret.trim(), domains: input.domains, defaultRole: role, allowPrivateAddress: false });
  if (!result.ok) {
    if (result.reason.field === "issuer") return { ok: false, reason: "discovery", detail: result.reason.detail };
    // The issuer itself is not a public https address: said as such, not as a failed discovery.
    if (result.reason.field === "address") return { ok: false, reason: "address", detail: result.reason.detail };
    return { ok: false, reason: result.reason.field === "domains" ? "domains" : "invalid" };
  }
  await recordOrgEvent(db(), ctx.organization.id, ctx.actor, "oidc-connection-added", { connectionId: result.id, issuer, clientId: input.clientId.trim() });
  return result;
}

/** An admin or owner removes one of this organization's connections (another's is not found); audited. */
export async function removeOidcConnectionAs(ctx: MemberContext, id: string): Promise<{ ok: true } | { ok: false; reason: OidcConnectionRefusal }> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  if (!(await removeOidcConnection(id, ctx.organization.id))) return { ok: false, reason: "not-found" };
  await recordOrgEvent(db(), ctx.organization.id, ctx.actor, "oidc-connection-removed", { connectionId: id });
  return { ok: true };
}

export type OidcConnectionListRow = { id: string; issuer: string; clientId: string; domains: string; defaultRole: string; createdAt: string; callbackUrl: string; signinUrl: string };

/** The organization's connections, each with the redirect URI to register at its IdP (never the secret). */
export async function listOidcConnections(organizationId: string, origin: string): Promise<OidcConnectionListRow[]> {
  const rows = await db().oidcConnection.findMany({ where: { organizationId }, orderBy: { createdAt: "asc" } });
  return rows.map((r) => ({
    id: r.id,
    issuer: r.issuer,
    clientId: r.clientId,
    domains: r.domains,
    defaultRole: r.defaultRole,
    createdAt: r.createdAt.toISOString(),
    callbackUrl: `${origin}${oidcCallbackPath(r.id)}`,
    signinUrl: `${origin}${oidcSignInPath(r.id)}`,
  }));
}

/**
 * The connections that sign in people of `domain`: those listing it whose organization has it
 * verified now (a domain verified by one organization only). The same answer for every address
 * of the domain, known or not. For the sign-in page's "Continue with <organization>".
 */
export async function oidcConnectionsForDomain(domain: string): Promise<Array<{ id: string; organizationId: string; organizationName: string; signInPath: string }>> {
  const name = domain.trim().toLowerCase();
  if (!name) return [];
  const owner = await db().organizationDomain.findFirst({ where: { verifiedDomain: name, state: "verified" }, select: { organizationId: true } });
  if (!owner) return [];
  const rows = await db().oidcConnection.findMany({
    where: { organizationId: owner.organizationId },
    include: { organization: { select: { name: true } } },
    orderBy: { createdAt: "asc" },
  });
  return rows
    .filter((r) => r.domains.split(/\s+/).includes(name))
    .map((r) => ({ id: r.id, organizationId: r.organizationId, organizationName: r.organization.name, signInPath: oidcSignInPath(r.id) }));
}

/** The organization names of OpenID Connect connection identities, by identity id (the account page's "<organization> (company sign-in)"). */
export async function oidcIdentityOrganizations(identityIds: string[]): Promise<Map<string, string>> {
  const rows = await db().oidcIdentity.findMany({ where: { id: { in: identityIds } }, select: { id: true, connection: { select: { organization: { select: { name: true } } } } } });
  return new Map(rows.map((r) => [r.id, r.connection.organization.name]));
}
