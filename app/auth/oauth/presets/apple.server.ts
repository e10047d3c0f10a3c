// Sign in with Apple: OpenID Connect at https://appleid.apple.com, with three quirks.
// - Asking for the name or address requires response_mode=form_post: Apple's page POSTs the
//   answer to the callback from its own site (the flow's check cookies are SameSite=None for it,
//   oauth/checks.server.ts).
// - The client secret is a JWT the team signs with its key (ES256; iss = Team ID, sub = the
//   Services ID, aud = Apple). Given the .p8 key, Vestibule signs a short-lived one at each use;
//   given a ready JWT (what Auth.js's AUTH_APPLE_SECRET holds), that JWT is sent as it is.
// - The person's name is never in the ID token: Apple sends it once, on the first sign-in, as the
//   form field `user` ({"name":{"firstName","lastName"},"email"}).
// `email_verified` and `is_private_email` may be booleans or strings; a relay address
// (…@privaterelay.appleid.com) is still a verified address that reaches the person.
import { importPKCS8, SignJWT } from "jose";
import type { AppleSigningKey, PresetClientConfig } from "../../core/config.server";
import { at, nonEmptyString, standardProfile, type Claims, type OAuthProfile, type OAuthProviderDefinition } from "./definition";

const ISSUER = "https://appleid.apple.com";
/** How long a client secret Vestibule signs is valid (Apple allows up to six months). */
const CLIENT_SECRET_LIFETIME_S = 10 * 60;
/** A signed secret is reused until this close to its end. */
const CLIENT_SECRET_RENEW_BEFORE_S = 5 * 60;

const secrets = new Map<string, { token: string; exp: number }>();

/** The client secret JWT for `clientId`, signed with the team's key (cached while it has five minutes left). */
export async function appleClientSecret(clientId: string, key: AppleSigningKey, audience = ISSUER): Promise<string> {
  const cacheKey = `${clientId}\u0000${key.teamId}\u0000${key.keyId}\u0000${audience}`;
  const now = Math.floor(Date.now() / 1000);
  const hit = secrets.get(cacheKey);
  if (hit && hit.exp - now > CLIENT_SECRET_RENEW_BEFORE_S) return hit.token;
  const exp = now + CLIENT_SECRET_LIFETIME_S;
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: key.keyId })
    .setIssuer(key.teamId)
    .setSubject(clientId)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .sign(await importPKCS8(key.privateKeyPem, "ES256"));
  secrets.set(cacheKey, { token, exp });
  return token;
}

/** The name in the form's `user` field, when Apple sent it (first sign-in only). */
function nameFromAnswer(answer: URLSearchParams): string | null {
  const raw = answer.get("user");
  if (!raw) return null;
  try {
    const user = JSON.parse(raw) as { name?: { firstName?: unknown; lastName?: unknown } };
    const parts = [nonEmptyString(user.name?.firstName), nonEmptyString(user.name?.lastName)].filter(Boolean);
    return parts.length ? parts.join(" ") : null;
  } catch {
    return null;
  }
}

export function appleProfile(claims: Claims, answer: URLSearchParams): OAuthProfile {
  return { ...standardProfile(claims), name: nameFromAnswer(answer), image: null };
}

export function appleProvider(client: PresetClientConfig, _config?: unknown, origin?: string): OAuthProviderDefinition {
  const issuer = at(ISSUER, origin).replace(/\/$/, "");
  const key = client.appleKey;
  return {
    id: "apple",
    name: "Apple",
    type: "oidc",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    ...(key ? { makeClientSecret: () => appleClientSecret(client.clientId, key, issuer) } : {}),
    issuer,
    scope: "openid name email",
    responseMode: "form_post",
    clientAuth: "client_secret_post",
    profile: appleProfile,
  };
}
