// Provider tokens after sign-in: sealed at rest on the Account row, handed to server code through
// getAccessToken() (refreshing and rotating them when they expire, once even under concurrent
// callers), revoked at sign-out (RFC 7009), and inspected with introspection (RFC 7662).
// See docs/decisions/012-oauth-tokens-at-rest.md.
import * as oauth from "oauth4webapi";
import { db, dbProvider, type Db } from "../../db/client.server";
import { getConfig, type AuthConfig } from "../core/config.server";
import { log } from "../core/log.server";
import { openAtRest, openAtRestDetail, resealStale, sealAtRest, type SealedColumn, type SealPlace } from "../core/sealed-at-rest.server";
import type { OAuthProviderDefinition } from "./presets/definition";
import { oauthDefinitions } from "./presets/index.server";
import { processTokenResponse, providerClient } from "./client.server";
import { outbound, outboundBudget, requestOptions } from "./http.server";

// ── Sealing ──────────────────────────────────────────────────────────────────────────────────

type TokenField = "accessToken" | "refreshToken" | "idToken";

/**
 * Where a token column is sealed (core's one sealing, sealed-at-rest.server.ts): the key and the
 * row binding this file used before that pair served every purpose, so tokens stored then still
 * open. A ciphertext copied to another account or column does not.
 */
function tokenPlace(at: { provider: string; providerAccountId: string; field: TokenField }): SealPlace {
  const purpose = "vestibule.oauth-token-at-rest";
  return {
    purpose,
    row: `${at.provider}\u0000${at.providerAccountId}\u0000${at.field}`,
    format: { keyLabel: `Vestibule token sealing key (${purpose})`, bindsPurpose: false },
  };
}

export async function sealToken(
  value: string | null | undefined,
  at: { provider: string; providerAccountId: string; field: TokenField },
  secrets: readonly string[] = getConfig().secrets,
): Promise<string | null> {
  if (!value) return null;
  return sealAtRest(value, tokenPlace(at), secrets);
}

/** Opens a sealed column; null when empty, sealed for another row, or with a secret no longer configured. */
export async function openToken(
  sealed: string | null | undefined,
  at: { provider: string; providerAccountId: string; field: TokenField },
  secrets: readonly string[] = getConfig().secrets,
): Promise<string | null> {
  if (!sealed) return null;
  return openAtRest(sealed, tokenPlace(at), secrets);
}

/**
 * Opens the token column `field` of a stored account and, when a secret other than the first
 * sealed it (AUTH_SECRET was rotated), writes it back sealed with the first: one UPDATE
 * conditional on the value read, a failure only logged (ADR 109, "Values at rest").
 */
async function openStoredToken(
  store: AccountStore,
  account: { id: string; provider: string; providerAccountId: string } & Partial<Record<TokenField, string | null>>,
  field: TokenField,
  secrets: readonly string[] = getConfig().secrets,
): Promise<{ value: string; current: boolean } | null> {
  const sealed = account[field];
  if (!sealed) return null;
  const place = tokenPlace({ provider: account.provider, providerAccountId: account.providerAccountId, field });
  const opened = await openAtRestDetail(sealed, place, secrets);
  if (opened && !opened.current) {
    await resealStale(sealed, opened.value, place, secrets, async (next) => {
      const { count } = await store.account.updateMany({ where: { id: account.id, [field]: sealed }, data: { [field]: next } });
      return count;
    });
  }
  return opened;
}

/** The Account token columns, for `npm run secret:reseal`; rows by account id. */
export const tokenColumns: SealedColumn[] = (["accessToken", "refreshToken", "idToken"] as const).map((field) => ({
  kind: `oauth-${field.replace("Token", "")}-token`,
  page: async (after, take) =>
    (
      await db().account.findMany({
        where: { [field]: { not: null }, ...(after === null ? {} : { id: { gt: after } }) },
        orderBy: { id: "asc" },
        take,
        select: { id: true, provider: true, providerAccountId: true, accessToken: true, refreshToken: true, idToken: true },
      })
    ).map((row) => ({ id: row.id, sealed: row[field] ?? "", at: tokenPlace({ provider: row.provider, providerAccountId: row.providerAccountId, field }) })),
  replace: async (id, sealed, next) => (await db().account.updateMany({ where: { id, [field]: sealed }, data: { [field]: next } })).count,
  reread: async (id) => {
    const row = await db().account.findUnique({ where: { id }, select: { provider: true, providerAccountId: true, accessToken: true, refreshToken: true, idToken: true } });
    const sealed = row?.[field];
    return row && sealed ? { sealed, at: tokenPlace({ provider: row.provider, providerAccountId: row.providerAccountId, field }) } : null;
  },
}));

/** What a token endpoint answered, in Account-column terms. */
export type TokenSet = {
  accessToken: string;
  refreshToken: string | null;
  idToken: string | null;
  /** Epoch seconds. */
  expiresAt: number | null;
  tokenType: string | null;
  scope: string | null;
  sessionState: string | null;
};

export function tokenSetFrom(response: oauth.TokenEndpointResponse, sessionState: string | null = null): TokenSet {
  return {
    accessToken: response.access_token,
    refreshToken: response.refresh_token ?? null,
    idToken: response.id_token ?? null,
    expiresAt: typeof response.expires_in === "number" ? Math.floor(Date.now() / 1000) + Math.floor(response.expires_in) : null,
    tokenType: response.token_type ?? null,
    scope: response.scope ?? null,
    sessionState,
  };
}

/**
 * The Account columns for a token set, sealed. A response without a refresh token keeps the one
 * stored (providers that do not rotate send it only once), so `refreshToken` is left out then.
 */
export async function accountTokenColumns(provider: string, providerAccountId: string, tokens: TokenSet) {
  const at = (field: TokenField) => ({ provider, providerAccountId, field });
  const columns: {
    accessToken: string | null;
    refreshToken?: string | null;
    idToken?: string | null;
    expiresAt: number | null;
    tokenType: string | null;
    scope: string | null;
    sessionState?: string | null;
  } = {
    accessToken: await sealToken(tokens.accessToken, at("accessToken")),
    expiresAt: tokens.expiresAt,
    tokenType: tokens.tokenType,
    scope: tokens.scope,
  };
  if (tokens.refreshToken) columns.refreshToken = await sealToken(tokens.refreshToken, at("refreshToken"));
  if (tokens.idToken) columns.idToken = await sealToken(tokens.idToken, at("idToken"));
  if (tokens.sessionState) columns.sessionState = tokens.sessionState;
  return columns;
}

// ── getAccessToken: refresh with rotation, single-flight ─────────────────────────────────────

/** Refresh this long before the recorded expiry, so a token handed out is still good when used. */
export const ACCESS_TOKEN_EXPIRY_MARGIN = 60;

function definitionFor(providerId: string, config: AuthConfig): OAuthProviderDefinition | undefined {
  return oauthDefinitions(config).find((d) => d.id === providerId);
}

const inFlight = new Map<string, Promise<string | null>>();

/**
 * A usable access token for the user's account at `providerId`, or null when there is none (no
 * such account, no token stored, or expired without a usable refresh token). An expired token is
 * refreshed with the stored refresh token; a rotated refresh token replaces the old one. Concurrent
 * calls for one account in this process share one refresh; across processes the write is
 * conditional on the refresh token it started from, so a loser adopts the winner's tokens.
 */
export async function getAccessToken(userId: string, providerId: string, config: AuthConfig = getConfig()): Promise<string | null> {
  const account = await db().account.findFirst({ where: { userId, provider: providerId } });
  if (!account) return null;
  const now = Math.floor(Date.now() / 1000);
  if (account.accessToken && (account.expiresAt === null || account.expiresAt - ACCESS_TOKEN_EXPIRY_MARGIN > now)) {
    return (await openStoredToken(db(), account, "accessToken", config.secrets))?.value ?? null;
  }
  let pending = inFlight.get(account.id);
  if (!pending) {
    pending = refreshAccount(account.id, config).finally(() => inFlight.delete(account.id));
    inFlight.set(account.id, pending);
  }
  return pending;
}

/**
 * One refresh for one account across every instance (docs/decisions/053). On PostgreSQL the
 * account row is locked (SELECT … FOR UPDATE) in a transaction that spans the call to the token
 * endpoint: a second instance asking at the same moment waits for the lock, then reads the row
 * again and finds the fresh token — the provider is called once, and a rotating provider never
 * sees its refresh token used twice. SQLite is one instance: the in-process single flight above
 * is the whole lock, and no write transaction is held open over a network call.
 */
async function refreshAccount(accountId: string, config: AuthConfig): Promise<string | null> {
  if (dbProvider() !== "postgres") return refreshHeld(db(), accountId, config);
  return db().$transaction(
    async (tx) => {
      await tx.$queryRawUnsafe('SELECT id FROM "Account" WHERE id = $1 FOR UPDATE', accountId);
      return refreshHeld(tx, accountId, config);
    },
    // Long enough for the token endpoint's own budget plus the reads and the write.
    { maxWait: config.databaseTimeoutMs, timeout: config.oauthTimeoutMs + 2 * config.databaseTimeoutMs },
  );
}

type AccountStore = Pick<Db, "account">;

async function refreshHeld(store: AccountStore, accountId: string, config: AuthConfig): Promise<string | null> {
  // Read again inside the single flight (and the lock): another caller may have refreshed a moment ago.
  const account = await store.account.findUnique({ where: { id: accountId } });
  if (!account) return null;
  const at = (field: TokenField) => ({ provider: account.provider, providerAccountId: account.providerAccountId, field });
  const now = Math.floor(Date.now() / 1000);
  if (account.accessToken && account.expiresAt !== null && account.expiresAt - ACCESS_TOKEN_EXPIRY_MARGIN > now) {
    return (await openStoredToken(store, account, "accessToken", config.secrets))?.value ?? null;
  }
  // Not re-sealed on its own here: the write below is conditional on this very value. A provider
  // that sends no new refresh token gets this one written back, sealed with the first secret.
  const opened = account.refreshToken ? await openAtRestDetail(account.refreshToken, tokenPlace(at("refreshToken")), config.secrets) : null;
  const refreshToken = opened?.value ?? null;
  const definition = definitionFor(account.provider, config);
  if (!refreshToken || !definition) return null;

  let tokens: TokenSet;
  try {
    const pc = await providerClient(definition, outboundBudget(config));
    const response = await outbound("refresh", async () => {
      const answer = await oauth.refreshTokenGrantRequest(pc.as, pc.client, pc.auth, refreshToken, requestOptions(pc.as.token_endpoint, pc.budget, definition.apiHeaders));
      return processTokenResponse(pc, answer, { grant: "refresh_token" });
    });
    tokens = tokenSetFrom(response);
  } catch (error) {
    log("warn", "oauth-refresh-failed", { provider: account.provider, accountId, error });
    // An invalid_grant means the refresh token is dead (revoked, expired, reused): forget it so
    // callers stop trying and the user is asked to sign in with the provider again.
    if (error instanceof Error && /invalid_grant/.test(error.message)) {
      await store.account.updateMany({
        where: { id: accountId, refreshToken: account.refreshToken },
        data: { accessToken: null, refreshToken: null, expiresAt: null },
      });
    }
    return null;
  }

  const columns = await accountTokenColumns(account.provider, account.providerAccountId, {
    ...tokens,
    refreshToken: tokens.refreshToken ?? (opened && !opened.current ? refreshToken : null),
  });
  const { count } = await store.account.updateMany({
    where: { id: accountId, refreshToken: account.refreshToken },
    data: columns,
  });
  if (count === 0) {
    // Another process rotated first; its tokens are the ones the provider now honours.
    const winner = await store.account.findUnique({ where: { id: accountId } });
    return winner ? openToken(winner.accessToken, at("accessToken")) : null;
  }
  return tokens.accessToken;
}

// ── Revocation (RFC 7009) and introspection (RFC 7662) ───────────────────────────────────────

/**
 * Revokes the refresh token (or, without one, the access token) of each of the user's accounts
 * (`provider`: only that provider's) at providers with a revocation endpoint, then forgets the
 * stored tokens. The accounts are revoked side by side; `deadline` stops every call still running
 * when it fires, and an account whose revocation was not confirmed keeps its tokens. Never throws:
 * a provider that cannot be reached must not keep anyone signed in. Returns how many were revoked.
 */
export async function revokeProviderTokens(
  userId: string,
  config: AuthConfig = getConfig(),
  options: { provider?: string; deadline?: AbortSignal } = {},
): Promise<number> {
  const accounts = await db().account.findMany({ where: { userId, ...(options.provider ? { provider: options.provider } : {}) } });
  const budget = outboundBudget(config, options.deadline);
  const outcomes = await Promise.all(
    accounts.map(async (account) => {
      if (!(await revokeAtProvider(account, config, budget))) return false;
      await db().account.updateMany({
        where: { id: account.id },
        data: { accessToken: null, refreshToken: null, expiresAt: null },
      });
      return true;
    }),
  );
  return outcomes.filter(Boolean).length;
}

type StoredTokens = { provider: string; providerAccountId: string; accessToken: string | null; refreshToken: string | null };

/**
 * Revokes one account's refresh token (or, without one, its access token) at its provider, when
 * the provider has a revocation endpoint. Never throws: false when nothing was confirmed revoked.
 */
async function revokeAtProvider(account: StoredTokens, config: AuthConfig, budget: ReturnType<typeof outboundBudget>): Promise<boolean> {
  const definition = definitionFor(account.provider, config);
  if (!definition || (!account.refreshToken && !account.accessToken)) return false;
  const at = (field: TokenField) => ({ provider: account.provider, providerAccountId: account.providerAccountId, field });
  try {
    const pc = await providerClient(definition, budget);
    if (!pc.as.revocation_endpoint) return false;
    const refreshToken = await openToken(account.refreshToken, at("refreshToken"));
    const token = refreshToken ?? (await openToken(account.accessToken, at("accessToken")));
    if (!token) return false;
    await outbound("revocation", async () =>
      oauth.processRevocationResponse(
        await oauth.revocationRequest(pc.as, pc.client, pc.auth, token, {
          ...requestOptions(pc.as.revocation_endpoint, pc.budget, definition.apiHeaders),
          additionalParameters: { token_type_hint: refreshToken ? "refresh_token" : "access_token" },
        }),
      ),
    );
    return true;
  } catch (error) {
    log("warn", "oauth-revocation-failed", { provider: account.provider, error });
    return false;
  }
}

/**
 * A deleted user's accounts (their rows are gone; these are the tokens read in the deleting
 * transaction): revoked side by side at the providers that can. Never throws.
 */
export async function revokeDeletedAccountTokens(config: AuthConfig, accounts: readonly StoredTokens[]): Promise<number> {
  const budget = outboundBudget(config);
  const outcomes = await Promise.all(accounts.map((account) => revokeAtProvider(account, config, budget)));
  return outcomes.filter(Boolean).length;
}

export type Introspection = { active: boolean; [claim: string]: unknown };

/**
 * Asks the provider whether `token` is active (RFC 7662), for providers that issue opaque access
 * tokens. Throws an OutboundError when the provider has no introspection endpoint or cannot answer.
 */
export async function introspectToken(
  providerId: string,
  token: string,
  hint: "access_token" | "refresh_token" = "access_token",
  config: AuthConfig = getConfig(),
): Promise<Introspection> {
  const definition = definitionFor(providerId, config);
  if (!definition) throw new Error(`no OAuth provider ${providerId} is configured`);
  const pc = await providerClient(definition, outboundBudget(config));
  if (!pc.as.introspection_endpoint) throw new Error(`provider ${providerId} has no introspection endpoint`);
  const result = await outbound("introspection", async () =>
    oauth.processIntrospectionResponse(
      pc.as,
      pc.client,
      await oauth.introspectionRequest(pc.as, pc.client, pc.auth, token, {
        ...requestOptions(pc.as.introspection_endpoint, pc.budget, definition.apiHeaders),
        additionalParameters: { token_type_hint: hint },
      }),
    ),
  );
  return result as Introspection;
}
