// An access token signed with the provider's current key, as its engine signs one (RFC 9068:
// `typ` at+jwt, `iss`, `aud` = the resource, `sub`, `client_id`, `scope`, `jti`), for the
// operator's tools that exercise a bearer-protected resource without an authorization flow:
// `npm run conformance` (scripts/conformance.ts) and `npm run bench` (GET /api/me). It reads the
// keys from the database the environment names; nothing in the app calls it.
import { importJWK, SignJWT } from "jose";
import { issuerUrl, privateJwksForEngine } from "../app/auth/provider/signing-keys.server";

export type AccessTokenRequest = { resourcePath: string; sub: string; clientId: string; scope: string; lifetimeSeconds: number };

export async function signAccessToken({ resourcePath, sub, clientId, scope, lifetimeSeconds }: AccessTokenRequest): Promise<string> {
  const { keys } = await privateJwksForEngine();
  const signing = keys.find((k) => k.alg === "RS256" && !k.key_ops);
  if (!signing) throw new Error("the provider has no RS256 signing key");
  const { key_ops: _ops, ...key } = signing;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ client_id: clientId, scope, jti: crypto.randomUUID() })
    .setProtectedHeader({ alg: "RS256", kid: key.kid, typ: "at+jwt" })
    .setIssuer(issuerUrl())
    .setAudience(`${issuerUrl()}${resourcePath}`)
    .setSubject(sub)
    .setIssuedAt(now)
    .setExpirationTime(now + lifetimeSeconds)
    .sign(await importJWK(key, "RS256"));
}
