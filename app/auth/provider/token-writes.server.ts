// The token endpoint's writes as ONE statement (ADR 180). An answer of the token endpoint saves
// its access token, its refresh token and, for a refresh, the answer kept for the grace: three
// commits when each was written as the engine saved it, each updating the payload table's B-trees
// again. Saved during a token request, those rows wait here on the request's context and are
// written together, in one upsert, once the answer is made and before it is sent: all of them or
// none (the client never gets a token that was not stored), one commit. What decides who wins a
// code or a refresh token — the consume's conditional update — is not deferred: it runs at once,
// as before (adapter.server.ts).
import type { KoaContextWithOIDC } from "oidc-provider";
import { engineLibraryIfLoaded } from "./library.server";
import { upsertPayloads, type PayloadColumns, type PayloadRow } from "./payload-store.server";

/** Where a token request's pending rows wait (the engine's request state). */
const STAGED = "vestibuleStagedTokenWrites";
/** The kinds a token answer issues: the only rows deferred, nothing the engine reads back in the same request. */
const ISSUED_KINDS: ReadonlySet<string> = new Set(["AccessToken", "RefreshToken", "ClientCredentials"]);

/** The token request `ctx` defers the tokens it issues until writeStagedTokens. */
export function stageTokenWrites(ctx: KoaContextWithOIDC): void {
  ctx.state[STAGED] = [];
}

/**
 * Defers the row when the engine saves an issued token during a token request that stages its
 * writes; false when the row is to be written now.
 */
export function stagedTokenWrite(kind: string, id: string, columns: PayloadColumns): boolean {
  if (!ISSUED_KINDS.has(kind)) return false;
  const staged: unknown = engineLibraryIfLoaded()?.default.ctx?.state[STAGED];
  if (!Array.isArray(staged)) return false;
  (staged as PayloadRow[]).push({ kind, id, columns });
  return true;
}

/**
 * Writes the rows the request deferred, and `extra` with them, in one statement — when the
 * answer is a success; otherwise they are dropped with it (nothing was handed out). Throws when
 * the write fails: the caller answers with an error instead of the tokens.
 */
export async function writeStagedTokens(ctx: KoaContextWithOIDC, extra: PayloadRow | null): Promise<void> {
  const staged: unknown = ctx.state[STAGED];
  delete ctx.state[STAGED];
  if (ctx.status !== 200) return;
  const rows = [...(Array.isArray(staged) ? (staged as PayloadRow[]) : []), ...(extra ? [extra] : [])];
  await upsertPayloads(rows);
}
