// The OAuth engine's storage on Vestibule's database, both of them (ADR 131): one OAuthPayload row
// per (kind, id), with the columns it is looked up or removed by (grantId, uid, userCode,
// accountId, clientId) and its expiry for cleanup. Clients are the OAuthClient table
// (clients.server.ts).
//
// The rows on every token request's path (find, consume, upsert) are statements on the driver,
// prepared once (payload-store.server.ts, ADR 172); the rest goes through the ORM.
//
// Codes and refresh tokens are consumed by ONE conditional UPDATE (`… WHERE consumedAt IS NULL`):
// of two instances redeeming the same one at once, exactly one wins. The loser of a code is a
// replay: the grant is revoked. The loser of a refresh token, and a client presenting a rotated
// refresh token again within AUTH_PROVIDER_REFRESH_GRACE seconds, gets the answer the winner got
// (engine.server.ts keeps it, sealed, for the grace); after the grace a rotated token revokes the
// whole grant (reuse detection).
//
// A token's row is keyed by its SHA-256 and its payload is kept without it (`jti`, put back from
// the token looked up); a device code, which the engine also finds by its user code, keeps its
// token sealed (ADR 177).
import type { Adapter, AdapterPayload } from "oidc-provider";
import { engineLibrary, engineLibraryIfLoaded } from "./library.server";
import { getConfig } from "../core/config.server";
import { clientSubject, countHit } from "../core/limits.server";
import { log } from "../core/log.server";
import { db } from "../../db/client.server";
import { EXTRA_GRANTS, findClientMetadata, saveRegisteredClient, removeClientRows } from "./clients.server";
import { ClientMetadataDocumentError, clientMetadataForEngine } from "./client-metadata-document.server";
import { openAtRest, sealAtRest } from "../core/sealed-at-rest.server";
import { consumePayload, findPayload, rowIdOf, TOKEN_KINDS, upsertPayload } from "./payload-store.server";
import { stagedTokenWrite } from "./token-writes.server";

/** The kinds consumed once (their rows carry consumedAt). */
const CONSUMABLE = new Set(["AuthorizationCode", "RefreshToken", "DeviceCode", "BackchannelAuthenticationRequest", "PushedAuthorizationRequest"]);
/** A refresh token presented again within the grace: the request's answer is the one stored for it. */
export const REPLAY_STATE = "vestibuleRefreshReplay";
/** The row kind of a stored refresh answer (engine.server.ts writes it). */
export const REFRESH_ANSWER_KIND = "RefreshAnswer";

/** Where a device code's own value is kept, sealed, in its payload (findByUserCode gives it back to the engine). */
const SEALED_JTI = "vestibuleSealedJti";
const deviceCodePlace = (rowId: string) => ({ purpose: "oauth-device-code", row: rowId });

const str = (value: unknown) => (typeof value === "string" && value ? value : null);

/**
 * A client as the engine reads it: when its id is an https URL and metadata documents are on
 * (AUTH_PROVIDER_CLIENT_METADATA_DOCUMENTS), the document at that URL, fetched through the SSRF
 * guard (ADR 140); else the OAuthClient table. A document refused is an unknown client (the
 * engine's invalid_client error page, never a redirect), its reason logged.
 */
async function clientOf(id: string): Promise<AdapterPayload | undefined> {
  const metadata = await clientMetadataOf(id);
  return metadata && withSubjectType(withoutPublicClientCredentials(metadata));
}

/**
 * A client without a secret never has client_credentials, whatever its stored metadata says
 * (ADR 176): that grant with no authentication is tokens for anyone who knows the client id.
 * Registration and oauth:client:add refuse it; this holds for rows stored before they did.
 */
function withoutPublicClientCredentials(metadata: AdapterPayload): AdapterPayload {
  const grants = Array.isArray(metadata.grant_types) ? (metadata.grant_types as string[]) : null;
  if (!grants || (metadata.token_endpoint_auth_method ?? "client_secret_basic") !== "none" || !grants.includes(EXTRA_GRANTS.client_credentials)) return metadata;
  return { ...metadata, grant_types: grants.filter((g) => g !== EXTRA_GRANTS.client_credentials) };
}

/**
 * Under AUTH_PROVIDER_SUBJECT=pairwise every client has pairwise subjects, whatever it registered
 * (ADR 163) — but a device-flow client: the engine takes such a client's sector from a jwks_uri,
 * which Vestibule's clients do not have, so it keeps the public `sub`.
 */
function withSubjectType(metadata: AdapterPayload): AdapterPayload {
  if (getConfig().provider?.subject !== "pairwise") return metadata;
  const grants = Array.isArray(metadata.grant_types) ? metadata.grant_types : [];
  return { ...metadata, subject_type: grants.includes(EXTRA_GRANTS.device_code) ? "public" : "pairwise" };
}

/**
 * A document about to be fetched is counted for the address of the request that named it
 * (OAUTH_CLIENT_DOCUMENT_CLIENT): past the limit the client is unknown, as a refused document is
 * (the engine's error page, never a redirect to a URI nobody checked).
 */
async function countDocumentFetch(): Promise<void> {
  const peer = engineLibraryIfLoaded()?.default.ctx?.req.headers["x-vestibule-remote-addr"];
  const refused = await countHit(getConfig().rateLimits, "OAUTH_CLIENT_DOCUMENT_CLIENT", clientSubject(typeof peer === "string" && peer ? peer : null));
  if (refused) throw new ClientMetadataDocumentError("rate_limited");
}

async function clientMetadataOf(id: string): Promise<AdapterPayload | undefined> {
  if (getConfig().provider?.clientMetadataDocuments) {
    try {
      const fromDocument = await clientMetadataForEngine(id, countDocumentFetch);
      if (fromDocument) return fromDocument as AdapterPayload;
    } catch (error) {
      if (!(error instanceof ClientMetadataDocumentError)) throw error;
      log("warn", "oauth-client-document-refused", { clientId: id, reason: error.reason });
      return undefined;
    }
  }
  return findClientMetadata(id);
}

/** Every row of a grant (codes, tokens, the grant itself, stored refresh answers). */
export async function removeGrantRows(grantId: string): Promise<number> {
  return (await db().oAuthPayload.deleteMany({ where: { OR: [{ grantId }, { kind: "Grant", id: grantId }] } })).count;
}

export class PrismaAdapter implements Adapter {
  constructor(readonly kind: string) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    if (this.kind === "Client") return saveRegisteredClient(id, payload);
    const key = rowIdOf(this.kind, id);
    let kept: AdapterPayload = payload;
    if (TOKEN_KINDS.has(this.kind)) {
      const { jti: _token, ...rest } = payload;
      kept = this.kind === "DeviceCode" ? { ...rest, [SEALED_JTI]: await sealAtRest(id, deviceCodePlace(key), getConfig().secrets) } : rest;
    }
    const columns = {
      payload: JSON.stringify(kept),
      grantId: str(payload.grantId),
      uid: str(payload.uid),
      userCode: str(payload.userCode),
      accountId: str(payload.accountId),
      clientId: str(payload.clientId),
      expiresAt: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
    };
    // A token the token endpoint issues is written with the rest of its answer (token-writes.server.ts).
    if (stagedTokenWrite(this.kind, key, columns)) return;
    // One INSERT … ON CONFLICT DO UPDATE: two writers creating the same row at once end with one row.
    await upsertPayload(this.kind, key, columns);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (this.kind === "Client") return clientOf(id);
    const row = await findPayload(this.kind, rowIdOf(this.kind, id));
    if (!row) return undefined;
    const payload = JSON.parse(row.payload) as AdapterPayload;
    if (TOKEN_KINDS.has(this.kind)) {
      delete payload[SEALED_JTI];
      payload.jti = id;
    }
    if (row.consumedAt) {
      if (this.kind === "RefreshToken") refreshReplayWithinGrace(id, payload, row.consumedAt);
      payload.consumed = Math.floor(row.consumedAt.getTime() / 1000);
    }
    return payload;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const row = await db().oAuthPayload.findFirst({ where: { kind: this.kind, uid } });
    return row ? (JSON.parse(row.payload) as AdapterPayload) : undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const row = await db().oAuthPayload.findFirst({ where: { kind: this.kind, userCode } });
    if (!row) return undefined;
    const payload = JSON.parse(row.payload) as AdapterPayload;
    if (TOKEN_KINDS.has(this.kind)) {
      // The device code itself, sealed beside its hash: the engine saves the code again by it once the user answers.
      const sealed = payload[SEALED_JTI];
      const token = typeof sealed === "string" ? await openAtRest(sealed, deviceCodePlace(row.id), getConfig().secrets) : null;
      if (!token) return undefined;
      delete payload[SEALED_JTI];
      payload.jti = token;
    }
    if (row.consumedAt) payload.consumed = Math.floor(row.consumedAt.getTime() / 1000);
    return payload;
  }

  async consume(id: string): Promise<void> {
    const key = rowIdOf(this.kind, id);
    if ((await consumePayload(this.kind, key, new Date())) || !CONSUMABLE.has(this.kind)) return;
    // Another request consumed it between this one's read and now.
    const row = await db().oAuthPayload.findUnique({ where: { kind_id: { kind: this.kind, id: key } }, select: { grantId: true } });
    if (this.kind === "RefreshToken" && getConfig().provider!.refreshGrace > 0) {
      const ctx = engineLibraryIfLoaded()?.default.ctx;
      if (ctx) ctx.state[REPLAY_STATE] = id;
      throw new (engineLibrary().errors.InvalidGrant!)("refresh token already used");
    }
    // A code (or a refresh token without grace) redeemed twice: whatever it issued is revoked.
    if (row?.grantId) await removeGrantRows(row.grantId);
    log("warn", "oauth-replay-refused", { kind: this.kind, grantRevoked: Boolean(row?.grantId) });
    throw new (engineLibrary().errors.InvalidGrant!)(this.kind === "AuthorizationCode" ? "authorization code already consumed" : "grant already used");
  }

  async destroy(id: string): Promise<void> {
    if (this.kind === "Client") {
      await removeClientRows(id);
      return;
    }
    await db().oAuthPayload.deleteMany({ where: { kind: this.kind, id: rowIdOf(this.kind, id) } });
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await removeGrantRows(grantId);
  }
}

/**
 * A rotated refresh token presented again: within the grace, by the client it was issued to, the
 * request is marked for the stored answer and refused here (the engine must not treat it as a
 * reuse); after the grace the engine sees it consumed and revokes the grant.
 */
function refreshReplayWithinGrace(id: string, payload: AdapterPayload, consumedAt: Date): void {
  const grace = getConfig().provider?.refreshGrace ?? 0;
  if (grace === 0 || Date.now() - consumedAt.getTime() > grace * 1000) return;
  const ctx = engineLibraryIfLoaded()?.default.ctx;
  // Only a refresh at the token endpoint: introspection and revocation see the token as it is.
  if (!ctx || ctx.oidc?.route !== "token" || ctx.oidc.params?.grant_type !== "refresh_token") return;
  if (ctx.oidc.client?.clientId !== payload.clientId) return;
  ctx.state[REPLAY_STATE] = id;
  throw new (engineLibrary().errors.InvalidGrant!)("refresh token already used");
}
