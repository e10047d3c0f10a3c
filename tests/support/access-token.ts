// Access tokens as the provider's engine signs them (RFC 9068: `typ` at+jwt, signed with the
// provider's current key), for tests of the resources that accept them (requireBearer) without
// running an authorization flow. Any claim can be changed or left out to make a bad token.
import { importJWK, SignJWT, type JWK, type JWTPayload } from "jose";
import { issuerUrl, privateJwksForEngine } from "../../app/auth/provider/signing-keys.server";
import { db } from "../../app/db/client.server";

/**
 * A grant of `userId` to `clientId` in the engine's storage, as consent leaves one: a resource
 * refuses a user's token whose client the user has no grant for (ADR 141). Its id.
 */
export async function grantAccess(userId: string, clientId = "test-client", grantId: string = crypto.randomUUID()): Promise<string> {
  await db().oAuthPayload.create({
    data: { kind: "Grant", id: grantId, payload: JSON.stringify({ accountId: userId, clientId }), grantId, accountId: userId, clientId, expiresAt: new Date(Date.now() + 3_600_000) },
  });
  return grantId;
}

export type MintOptions = {
  /** Claims over the defaults; a claim set to undefined is left out. */
  claims?: Record<string, unknown>;
  /** Header `typ` (default at+jwt). */
  typ?: string;
  /** Sign with this private JWK instead of the current RS256 signing key. */
  key?: JWK;
};

/** The private JWK that signs now for `alg`. */
export async function signingKey(alg: "RS256" | "ES256" = "RS256"): Promise<JWK> {
  const { keys } = await privateJwksForEngine();
  const key = keys.find((k) => k.alg === alg && !k.key_ops);
  if (!key) throw new Error(`no ${alg} signing key`);
  return key;
}

/** A signed access token for `aud` (a resource URL), `sub` and `scope`, valid ten minutes from now. */
export async function mintAccessToken(aud: string, sub: string, scope: string, options: MintOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    iss: issuerUrl(),
    aud,
    sub,
    client_id: "test-client",
    scope,
    jti: crypto.randomUUID(),
    iat: now,
    exp: now + 600,
    ...options.claims,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  const key = options.key ?? (await signingKey());
  const { key_ops: _ops, ...usable } = key;
  return new SignJWT(claims as JWTPayload)
    .setProtectedHeader({ alg: key.alg!, kid: key.kid, typ: options.typ ?? "at+jwt" })
    .sign(await importJWK(usable, key.alg));
}
