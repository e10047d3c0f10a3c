// Refresh tokens for `npm run bench` (the token endpoint's refresh grant): every use rotates a
// refresh token, so a run of N requests needs N tokens. They are made here, in the database the
// environment names, as the provider stores them: one public client (PKCE, no secret to hash, as
// command-line tools and MCP clients are), one grant the user allowed with offline_access, one
// refresh token issued by the engine itself, and copies of its row under fresh ids (an opaque
// token's row id is its value's SHA-256, its payload without it: ADR 177). Nothing in the app calls it.
import { randomBytes } from "node:crypto";
import { addClient } from "../app/auth/provider/clients.server";
import { getEngine } from "../app/auth/provider/engine.server";
import { tokenRowId } from "../app/auth/provider/payload-store.server";
import { db } from "../app/db/client.server";

export type RefreshTokens = { clientId: string; tokens: string[] };

export async function mintRefreshTokens(email: string, count: number): Promise<RefreshTokens> {
  const user = await db().user.findUniqueOrThrow({ where: { email }, select: { id: true } });
  const { client: added } = await addClient({ name: "Bench CLI", redirectUris: ["http://127.0.0.1/callback"], public: true, source: "cli" });
  const { provider } = await getEngine();
  const engine = provider as unknown as {
    Grant: new (init: { accountId: string; clientId: string }) => { addOIDCScope(scope: string): void; save(): Promise<string> };
    RefreshToken: new (init: Record<string, unknown>) => { save(): Promise<string> };
  };
  const client = await provider.Client.find(added.clientId);
  const grant = new engine.Grant({ accountId: user.id, clientId: added.clientId });
  grant.addOIDCScope("openid email offline_access");
  const grantId = await grant.save();
  const now = Math.floor(Date.now() / 1000);
  const first = await new engine.RefreshToken({
    client,
    accountId: user.id,
    grantId,
    gty: "authorization_code",
    scope: "openid email offline_access",
    authTime: now,
    amr: ["pwd"],
    acr: "aal1",
    rotations: 0,
  }).save();
  const row = await db().oAuthPayload.findUniqueOrThrow({ where: { kind_id: { kind: "RefreshToken", id: tokenRowId(first) } } });
  const template = JSON.parse(row.payload) as Record<string, unknown>;
  const tokens = [first];
  const BATCH = 1_000;
  while (tokens.length < count) {
    const ids = Array.from({ length: Math.min(BATCH, count - tokens.length) }, () => randomBytes(32).toString("base64url"));
    await db().oAuthPayload.createMany({
      data: ids.map((id) => ({ ...row, id: tokenRowId(id), createdAt: undefined, payload: JSON.stringify(template) })),
    });
    tokens.push(...ids);
  }
  return { clientId: added.clientId, tokens };
}
