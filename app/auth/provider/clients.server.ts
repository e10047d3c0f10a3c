// The apps that may ask Vestibule's provider for tokens (ADR 132): added by `npm run
// oauth:client:add` or on /admin, registered by anyone when AUTH_PROVIDER_REGISTRATION=open. A
// confidential client's secret is shown once and kept sealed at rest, never in plain text. The
// engine reads clients through its adapter (adapter.server.ts → findClientMetadata).
import { actorEventFields, type Actor } from "../accounts/actor";
import { recordEvent } from "../accounts/audit.server";
import { engineLibrary } from "./library.server";
import { randomToken } from "../core/crypto.server";
import { getConfig } from "../core/config.server";
import { openAtRest, sealAtRest, type SealedColumn, type SealPlace } from "../core/sealed-at-rest.server";
import { db } from "../../db/client.server";
import { redirectHosts } from "./pairwise.server";
import { findClientRow } from "./payload-store.server";

export const CLIENT_SOURCES = ["cli", "admin", "registration"] as const;
export type ClientSource = (typeof CLIENT_SOURCES)[number];
/** Grants a client may be given besides the code flow (which every client with redirect URIs has). */
export const EXTRA_GRANTS = { client_credentials: "client_credentials", device_code: "urn:ietf:params:oauth:grant-type:device_code" } as const;
export type ExtraGrant = keyof typeof EXTRA_GRANTS;
/** A client's name: shown on the consent page and /account, one line. */
export const CLIENT_NAME_MAX_LENGTH = 100;

const SEAL_PURPOSE = "oauth-client-secret";
const placeOf = (clientId: string): SealPlace => ({ purpose: SEAL_PURPOSE, row: clientId });
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export class ClientInputError extends Error {}

/** An `http:` redirect URI on a loopback host (any port may be used with it, RFC 8252). */
export function isLoopbackRedirect(uri: URL): boolean {
  return uri.protocol === "http:" && LOOPBACK_HOSTS.has(uri.hostname);
}
/** A private-use scheme such as `com.example.app:/callback` (RFC 8252 section 7.1). */
export function isCustomSchemeRedirect(uri: URL): boolean {
  return uri.protocol !== "http:" && uri.protocol !== "https:" && /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(uri.protocol);
}

/**
 * A client whose redirect URIs are all loopback or a private-use scheme is a native app (a CLI, a
 * desktop MCP client), whatever it said or left out: it then may use any loopback port. Used for
 * clients added here, registered dynamically and described by a client ID metadata document.
 */
export function applicationTypeFor(redirectUris: readonly string[], declared?: unknown): "web" | "native" {
  if (declared === "native") return "native";
  const parsed = redirectUris.map((u) => URL.parse(u));
  if (parsed.length > 0 && parsed.every((u) => u !== null && (isLoopbackRedirect(u) || isCustomSchemeRedirect(u)))) return "native";
  return "web";
}

/** A redirect URI as a client may register it: absolute, no fragment, no credentials, https:, loopback http: or a private-use scheme. */
export function checkRedirectUri(value: string): string {
  const url = URL.parse(value);
  if (!url || value.includes("#") || url.username || url.password) throw new ClientInputError(`not a redirect URI (absolute, no fragment, no user name): ${value}`);
  if (url.protocol === "https:" || isLoopbackRedirect(url) || isCustomSchemeRedirect(url)) return value;
  throw new ClientInputError(`a redirect URI must be https:, http: on localhost, 127.0.0.1 or [::1], or a private-use scheme such as com.example.app: (got ${value})`);
}

export type NewClient = {
  name: string;
  redirectUris: string[];
  public?: boolean;
  firstParty?: boolean;
  grants?: ExtraGrant[];
  postLogoutRedirectUris?: string[];
  backchannelLogoutUri?: string | null;
  /** OpenID Connect Core 8.1: the sector of a client whose redirect URIs have several hosts, under pairwise subjects. */
  sectorIdentifierUri?: string | null;
  source: Exclude<ClientSource, "registration">;
};

export type ClientSummary = {
  clientId: string;
  name: string;
  public: boolean;
  firstParty: boolean;
  source: ClientSource;
  redirectUris: string[];
  grantTypes: string[];
  createdAt: Date;
};

function summaryOf(row: { clientId: string; name: string; metadata: string; secretSealed: string | null; firstParty: boolean; source: string; createdAt: Date }): ClientSummary {
  const metadata = JSON.parse(row.metadata) as Record<string, unknown>;
  return {
    clientId: row.clientId,
    name: row.name,
    public: row.secretSealed === null,
    firstParty: row.firstParty,
    source: row.source as ClientSource,
    redirectUris: (metadata.redirect_uris as string[] | undefined) ?? [],
    grantTypes: (metadata.grant_types as string[] | undefined) ?? [],
    createdAt: row.createdAt,
  };
}

/** Adds a client; its secret (confidential clients) is returned once and never again. */
export async function addClient(input: NewClient): Promise<{ client: ClientSummary; secret: string | null }> {
  const name = input.name.trim();
  if (!name || name.length > CLIENT_NAME_MAX_LENGTH || /\p{Cc}/u.test(name)) throw new ClientInputError(`the name must be 1 to ${CLIENT_NAME_MAX_LENGTH} characters on one line`);
  const redirectUris = [...new Set(input.redirectUris.map(checkRedirectUri))];
  const postLogout = [...new Set((input.postLogoutRedirectUris ?? []).map(checkRedirectUri))];
  const grants = [...new Set(input.grants ?? [])];
  if (grants.includes("client_credentials") && input.public) throw new ClientInputError("client_credentials needs a confidential client (leave out --public)");
  const codeFlow = redirectUris.length > 0;
  if (!codeFlow && grants.length === 0) throw new ClientInputError("give at least one --redirect-uri (or a --grant)");
  let backchannel: string | null = null;
  if (input.backchannelLogoutUri) {
    const url = URL.parse(input.backchannelLogoutUri);
    if (!url || input.backchannelLogoutUri.includes("#") || !(url.protocol === "https:" || isLoopbackRedirect(url))) {
      throw new ClientInputError(`the back-channel logout URI must be https: (or http: on a loopback host): ${input.backchannelLogoutUri}`);
    }
    backchannel = input.backchannelLogoutUri;
  }
  let sector: string | null = null;
  if (input.sectorIdentifierUri) {
    const url = URL.parse(input.sectorIdentifierUri);
    if (!url || url.protocol !== "https:" || input.sectorIdentifierUri.includes("#")) throw new ClientInputError(`the sector identifier URI must be an https: URL: ${input.sectorIdentifierUri}`);
    sector = input.sectorIdentifierUri;
  }
  // Pairwise subjects are per host (ADR 163): one client on several hosts is one sector only when
  // a sector_identifier_uri lists its redirect URIs (OpenID Connect Core 8.1).
  if (getConfig().provider?.subject === "pairwise" && !sector && !grants.includes("device_code") && redirectHosts(redirectUris).length > 1) {
    throw new ClientInputError(
      `under pairwise subjects (AUTH_PROVIDER_SUBJECT=pairwise) the redirect URIs of one client must share one host, or --sector-identifier-uri must name an https: JSON list of them (got hosts ${redirectHosts(redirectUris).join(", ")})`,
    );
  }
  const clientId = randomToken(16);
  const secret = input.public ? null : randomToken(32);
  const grantTypes = [...(codeFlow ? ["authorization_code", "refresh_token"] : []), ...grants.map((g) => EXTRA_GRANTS[g])];
  const metadata: Record<string, unknown> = {
    client_name: name,
    application_type: applicationTypeFor(redirectUris),
    redirect_uris: redirectUris,
    post_logout_redirect_uris: postLogout,
    grant_types: grantTypes,
    response_types: codeFlow ? ["code"] : [],
    token_endpoint_auth_method: secret ? "client_secret_basic" : "none",
    ...(backchannel ? { backchannel_logout_uri: backchannel, backchannel_logout_session_required: true } : {}),
    ...(sector ? { sector_identifier_uri: sector } : {}),
  };
  const secretSealed = secret ? await sealAtRest(secret, placeOf(clientId), getConfig().secrets) : null;
  const row = await db().oAuthClient.create({
    data: { clientId, name, metadata: JSON.stringify(metadata), secretSealed, firstParty: Boolean(input.firstParty), source: input.source },
  });
  return { client: summaryOf(row), secret };
}

/** An operator (the command line or an admin on /admin) adds a client: audited as oauth-client-added. */
export async function addClientAs(actor: Actor, input: Omit<NewClient, "source">): Promise<{ client: ClientSummary; secret: string | null }> {
  const source = actor.source === "admin" ? "admin" : "cli";
  const added = await addClient({ ...input, source });
  const { userId: _none, ...fields } = actorEventFields(actor, "", { clientId: added.client.clientId, name: added.client.name, public: added.client.public });
  await recordEvent("oauth-client-added", { ...fields, userId: null });
  return added;
}

/** An operator removes a client and everything issued to it: audited as oauth-client-removed. False: no such client. */
export async function removeClientAs(actor: Actor, clientId: string): Promise<boolean> {
  const client = await findClient(clientId);
  if (!client) return false;
  await removeClientRows(clientId);
  const { userId: _none, ...fields } = actorEventFields(actor, "", { clientId, name: client.name });
  await recordEvent("oauth-client-removed", { ...fields, userId: null });
  return true;
}

export async function listClients(): Promise<ClientSummary[]> {
  const rows = await db().oAuthClient.findMany({ orderBy: [{ createdAt: "asc" }, { clientId: "asc" }] });
  return rows.map(summaryOf);
}

export async function findClient(clientId: string): Promise<ClientSummary | null> {
  const row = await db().oAuthClient.findUnique({ where: { clientId } });
  return row ? summaryOf(row) : null;
}

/** Whether the client is first-party (its users are not asked for consent). */
export async function isFirstParty(clientId: string): Promise<boolean> {
  return (await db().oAuthClient.findUnique({ where: { clientId }, select: { firstParty: true } }))?.firstParty ?? false;
}

/** Removes the client and everything issued to it: grants, codes, refresh tokens, sessions' traces. */
export async function removeClientRows(clientId: string): Promise<boolean> {
  const client = db();
  const [, removed] = await client.$transaction([
    client.oAuthPayload.deleteMany({ where: { clientId } }),
    client.oAuthClient.deleteMany({ where: { clientId } }),
  ]);
  return removed.count === 1;
}

/** The client's metadata as the engine reads it: the stored metadata, the secret opened. */
export async function findClientMetadata(clientId: string): Promise<Record<string, unknown> | undefined> {
  // On the driver (payload-store.server.ts): read on every token request.
  const row = await findClientRow(clientId);
  if (!row) return undefined;
  const metadata: Record<string, unknown> = { ...(JSON.parse(row.metadata) as Record<string, unknown>), client_id: clientId };
  if (row.secretSealed) {
    const secret = await openAtRest(row.secretSealed, placeOf(clientId), getConfig().secrets);
    // A secret no configured AUTH_SECRET opens: the client cannot authenticate (logged by openAtRest).
    if (!secret) return undefined;
    metadata.client_secret = secret;
  }
  return metadata;
}

/** The grant types a dynamically registered client may have: the code flow's. */
const REGISTRABLE_GRANTS = ["authorization_code", "refresh_token"] as const;
/** Registration fields nothing here uses, dropped before the client is stored. */
const UNUSED_REGISTRATION_FIELDS = ["jwks_uri", "jwks", "request_uris", "initiate_login_uri", "frontchannel_logout_uri", "frontchannel_logout_session_required"] as const;

/**
 * A registered client's name as the consent page will show it: trimmed, one line, at most
 * CLIENT_NAME_MAX_LENGTH characters, no control or invisible formatting character (a
 * right-to-left override could make "evil" read as something else), and not containing the
 * site's name (AUTH_SITE_NAME). Refused otherwise; none given: the client id.
 */
function registeredName(value: unknown, clientId: string): string {
  if (value === undefined) return clientId;
  const name = typeof value === "string" ? value.trim() : "";
  if (!name || name.length > CLIENT_NAME_MAX_LENGTH || /[\p{Cc}\p{Cf}\u2028\u2029]/u.test(name)) {
    throw new (engineLibrary().errors.InvalidClientMetadata!)(`client_name must be 1 to ${CLIENT_NAME_MAX_LENGTH} characters on one line, without control or formatting characters`);
  }
  // The site's own name on the consent page would read as the site asking: only an operator's app may wear it.
  if (name.toLocaleLowerCase().includes(getConfig().siteName.toLocaleLowerCase())) {
    throw new (engineLibrary().errors.InvalidClientMetadata!)("client_name may not contain the site's name");
  }
  return name;
}

/**
 * A client registered dynamically (RFC 7591, AUTH_PROVIDER_REGISTRATION=open): only a public
 * client (no secret: anyone may register, so nobody's secret means anything), with redirect URIs
 * that are https: or loopback; one whose redirect URIs are all loopback or a private-use scheme is
 * kept as native, whatever it declared, so any loopback port works (RFC 8252). Anything else is
 * refused with invalid_client_metadata before it is stored.
 */
export async function saveRegisteredClient(clientId: string, payload: Record<string, unknown>): Promise<void> {
  const { client_secret: _secret, client_id: _id, ...metadata } = payload;
  const existing = await db().oAuthClient.findUnique({ where: { clientId }, select: { source: true } });
  if (existing && existing.source !== "registration") throw new (engineLibrary().errors.InvalidClientMetadata!)("this client cannot be changed here");
  // Only an operator names where logout tokens go (ADR 145): Vestibule POSTs there without an address check.
  if (metadata.backchannel_logout_uri !== undefined) throw new (engineLibrary().errors.InvalidClientMetadata!)("backchannel_logout_uri may only be set by an operator (oauth:client:add)");
  if (metadata.token_endpoint_auth_method !== "none") throw new (engineLibrary().errors.InvalidClientMetadata!)("only public clients may register: token_endpoint_auth_method must be none");
  const redirectUris = Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris.map(String) : [];
  for (const uri of redirectUris) {
    const url = URL.parse(uri);
    if (!url || !(url.protocol === "https:" || isLoopbackRedirect(url))) throw new (engineLibrary().errors.InvalidClientMetadata!)("redirect URIs must be https: or http: on a loopback host");
  }
  // The code flow only (ADR 176): client_credentials would be tokens for every resource without a
  // user or a secret; the device flow is for an operator's clients (whoever holds the device gets
  // the tokens).
  const grantTypes = Array.isArray(metadata.grant_types) ? metadata.grant_types.map(String) : ["authorization_code"];
  if (grantTypes.some((g) => !(REGISTRABLE_GRANTS as readonly string[]).includes(g))) {
    throw new (engineLibrary().errors.InvalidClientMetadata!)("grant_types may only be authorization_code and refresh_token");
  }
  // What nothing here reads is not kept (ADR 176): a URI stored is a URI someone may later fetch.
  for (const unused of UNUSED_REGISTRATION_FIELDS) delete metadata[unused];
  metadata.application_type = applicationTypeFor(redirectUris, metadata.application_type === "native" ? "native" : undefined);
  const name = registeredName(metadata.client_name, clientId);
  if (typeof metadata.client_name === "string") metadata.client_name = name;
  const data = { name, metadata: JSON.stringify(metadata), secretSealed: null };
  await db().oAuthClient.upsert({ where: { clientId }, create: { clientId, source: "registration", firstParty: false, ...data }, update: data });
}

/** The sealed client secrets, as `secret:reseal` walks them. */
export const clientSecretColumn: SealedColumn = {
  kind: "oauth-client-secret",
  page: async (after, take) =>
    (
      await db().oAuthClient.findMany({
        where: { secretSealed: { not: null }, ...(after === null ? {} : { clientId: { gt: after } }) },
        orderBy: { clientId: "asc" },
        take,
        select: { clientId: true, secretSealed: true },
      })
    ).map((row) => ({ id: row.clientId, sealed: row.secretSealed!, at: placeOf(row.clientId) })),
  replace: async (clientId, sealed, secretSealed) => (await db().oAuthClient.updateMany({ where: { clientId, secretSealed: sealed }, data: { secretSealed } })).count,
  reread: async (clientId) => {
    const row = await db().oAuthClient.findUnique({ where: { clientId }, select: { secretSealed: true } });
    return row?.secretSealed ? { sealed: row.secretSealed, at: placeOf(clientId) } : null;
  },
};
