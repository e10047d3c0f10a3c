// A deliberately wrong OpenID provider built with jose and node:http. In mode "ok" it is a small
// but correct IdP (discovery, authorization code + PKCE, signed ID tokens, userinfo, JWKS), which
// the tests use as the control; every other mode breaks exactly one thing about its answers.
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWK } from "jose";

export const HOSTILE_CLIENT = { clientId: "hostile-client", clientSecret: "hostile-secret-0123456789" };
export const HOSTILE_USER = { sub: "hostile-user-1", email: "mallory@hostile.example", name: "Mallory" };
/** The tenant the multi-tenant modes sign their ID tokens for (Entra ID's `tid`). */
export const HOSTILE_TENANT = "9188040d-6c67-4c5b-b112-36a304b66dad";

export type HostileMode =
  | "ok"
  | "bad-signature"
  | "alg-none"
  | "unknown-kid"
  | "rotated-kid"
  | "wrong-aud"
  | "wrong-azp"
  | "foreign-azp-single-aud"
  // auth_time an hour ago (the IdP reused an old login), or no auth_time at all.
  | "stale-auth-time"
  | "missing-auth-time"
  | "wrong-iss"
  | "wrong-iss-param"
  | "expired"
  | "future-iat"
  | "missing-nonce"
  | "wrong-nonce"
  | "userinfo-sub-mismatch"
  | "provider-error"
  | "token-error"
  | "slow-discovery"
  | "slow-token"
  | "slow-userinfo"
  | "slow-jwks"
  | "unreachable-token"
  | "unreachable-userinfo"
  | "unreachable-jwks"
  // Shaped like Entra ID's multi-tenant endpoint: discovery at /common/v2.0 states the issuer
  // "<origin>/{tenantid}/v2.0", no RFC 9207 iss parameter, and each ID token names its tenant
  // in `tid` and in `iss` ("<origin>/<tid>/v2.0"). "-foreign-iss": `iss` names another tenant.
  | "multi-tenant"
  | "multi-tenant-foreign-iss";

type Key = { privateKey: CryptoKey; jwk: JWK; kid: string };
type Grant = { nonce: string | null; challenge: string; redirectUri: string };

export type HostileIdp = {
  issuer: string;
  mode: HostileMode;
  /** How long the slow-* endpoints take to answer, in ms. */
  slowMs: number;
  /** Requests per path since the last reset(). */
  hits: Record<string, number>;
  /**
   * Tokens whose revocation was answered (RFC 7009), since the last reset(). The token decides how
   * /revoke answers: "revoke-after-<ms>" after that many ms, "revoke-never" not at all (the
   * request stalls until the client gives up), anything else at once.
   */
  revoked: string[];
  reset(mode?: HostileMode): void;
  stop(): Promise<void>;
};

async function makeKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" }, kid };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store" });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage) {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export async function startHostileIdp(): Promise<HostileIdp> {
  const [keyA, keyB, keyC] = await Promise.all([makeKey("key-a"), makeKey("key-b"), makeKey("key-c")]);
  const grants = new Map<string, Grant>();
  const dead = `http://127.0.0.1:${await closedPort()}`;
  let server: Server;

  const state: HostileIdp = {
    issuer: "",
    mode: "ok",
    slowMs: 1_500,
    hits: {},
    revoked: [],
    reset(mode = "ok") {
      state.mode = mode;
      state.hits = {};
      state.revoked = [];
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  async function idToken(grant: Grant): Promise<string> {
    const m = state.mode;
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      sub: HOSTILE_USER.sub,
      email: HOSTILE_USER.email,
      email_verified: true,
      name: HOSTILE_USER.name,
      nonce: grant.nonce ?? undefined,
    };
    if (m === "missing-nonce") delete claims.nonce;
    if (m === "wrong-nonce") claims.nonce = "not-the-nonce-that-was-sent";
    if (m === "wrong-azp" || m === "foreign-azp-single-aud") Object.assign(claims, { azp: "another-client" });
    if (m.startsWith("multi-tenant")) claims.tid = HOSTILE_TENANT;
    if (m !== "missing-auth-time") claims.auth_time = m === "stale-auth-time" ? now - 3600 : now;
    const issuer =
      m === "wrong-iss"
        ? "https://evil.example"
        : m === "multi-tenant"
          ? `${state.issuer}/${HOSTILE_TENANT}/v2.0`
          : m === "multi-tenant-foreign-iss"
            ? `${state.issuer}/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0`
            : state.issuer;
    const audience = m === "wrong-aud" ? "another-client" : m === "wrong-azp" ? [HOSTILE_CLIENT.clientId, "another-client"] : HOSTILE_CLIENT.clientId;
    const iat = m === "expired" ? now - 7200 : m === "future-iat" ? now + 300 : now;
    const exp = m === "expired" ? now - 3600 : iat + 3600;
    if (m === "alg-none") {
      return new UnsecuredJWT(claims).setIssuer(issuer).setAudience(audience).setIssuedAt(iat).setExpirationTime(exp).encode();
    }
    // bad-signature: signed with key B but claiming to be key A.
    const key = m === "bad-signature" ? keyB : m === "unknown-kid" ? keyC : m === "rotated-kid" ? keyB : keyA;
    const kid = m === "bad-signature" ? keyA.kid : key.kid;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid, typ: "JWT" })
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(key.privateKey);
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", state.issuer);
    state.hits[url.pathname] = (state.hits[url.pathname] ?? 0) + 1;
    const m = state.mode;
    const multiTenant = m.startsWith("multi-tenant");
    switch (url.pathname) {
      case "/common/v2.0/.well-known/openid-configuration":
      case "/.well-known/openid-configuration": {
        if (m === "slow-discovery") await sleep(state.slowMs);
        if (multiTenant !== url.pathname.startsWith("/common/")) return json(res, 404, { error: "not_found" });
        return json(res, 200, {
          issuer: multiTenant ? `${state.issuer}/{tenantid}/v2.0` : state.issuer,
          authorization_endpoint: `${state.issuer}/authorize`,
          token_endpoint: m === "unreachable-token" ? `${dead}/token` : `${state.issuer}/token`,
          userinfo_endpoint: m === "unreachable-userinfo" ? `${dead}/userinfo` : `${state.issuer}/userinfo`,
          jwks_uri: m === "unreachable-jwks" ? `${dead}/jwks` : `${state.issuer}/jwks`,
          revocation_endpoint: `${state.issuer}/revoke`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          // alg-none: the metadata even advertises "none"; the client must still refuse it.
          id_token_signing_alg_values_supported: m === "alg-none" ? ["RS256", "none"] : ["RS256"],
          code_challenge_methods_supported: ["S256"],
          authorization_response_iss_parameter_supported: !multiTenant,
        });
      }
      case "/authorize": {
        const p = url.searchParams;
        const redirect = new URL(p.get("redirect_uri")!);
        redirect.searchParams.set("state", p.get("state") ?? "");
        if (!multiTenant) redirect.searchParams.set("iss", m === "wrong-iss-param" ? "https://evil.example" : state.issuer);
        if (m === "provider-error") {
          redirect.searchParams.set("error", "server_error");
        } else {
          const code = randomBytes(16).toString("hex");
          grants.set(code, { nonce: p.get("nonce"), challenge: p.get("code_challenge") ?? "", redirectUri: p.get("redirect_uri")! });
          redirect.searchParams.set("code", code);
        }
        res.writeHead(302, { Location: redirect.href });
        return res.end();
      }
      case "/token": {
        if (m === "slow-token") await sleep(state.slowMs);
        const body = await readBody(req);
        // RFC 6749 §2.3.1: id and secret are form-urlencoded before the Basic encoding.
        const auth = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64")
          .toString()
          .split(":")
          .map((part) => decodeURIComponent(part.replace(/\+/g, " ")))
          .join(":");
        const grant = grants.get(body.get("code") ?? "");
        grants.delete(body.get("code") ?? "");
        const verifier = body.get("code_verifier") ?? "";
        const challenge = createHash("sha256").update(verifier).digest("base64url");
        if (
          m === "token-error" ||
          !grant ||
          auth !== `${HOSTILE_CLIENT.clientId}:${HOSTILE_CLIENT.clientSecret}` ||
          challenge !== grant.challenge ||
          body.get("redirect_uri") !== grant.redirectUri
        ) {
          const why = m === "token-error" ? "mode" : !grant ? "unknown code" : challenge !== grant.challenge ? "PKCE" : body.get("redirect_uri") !== grant.redirectUri ? "redirect_uri" : `client auth ${auth}`;
          return json(res, 400, { error: "invalid_grant", error_description: `refused: ${why}` });
        }
        return json(res, 200, {
          access_token: `at-${randomBytes(8).toString("hex")}`,
          token_type: "Bearer",
          expires_in: 3600,
          scope: "openid profile email",
          id_token: await idToken(grant),
        });
      }
      case "/userinfo": {
        if (m === "slow-userinfo") await sleep(state.slowMs);
        return json(res, 200, {
          sub: m === "userinfo-sub-mismatch" ? "someone-else-entirely" : HOSTILE_USER.sub,
          email: HOSTILE_USER.email,
          email_verified: true,
          name: HOSTILE_USER.name,
        });
      }
      case "/revoke": {
        const token = (await readBody(req)).get("token") ?? "";
        if (token === "revoke-never") {
          await new Promise((resolve) => res.once("close", resolve));
          return;
        }
        const after = /^revoke-after-(\d+)$/.exec(token);
        if (after) await sleep(Number(after[1]));
        state.revoked.push(token);
        res.writeHead(200);
        return res.end();
      }
      case "/jwks": {
        if (m === "slow-jwks") await sleep(state.slowMs);
        // rotated-kid: the first fetch predates the rotation (key A only), later ones have key B too.
        const keys = m === "rotated-kid" && state.hits["/jwks"] === 1 ? [keyA.jwk] : m === "rotated-kid" ? [keyA.jwk, keyB.jwk] : [keyA.jwk];
        return json(res, 200, { keys });
      }
      default:
        return json(res, 404, { error: "not_found" });
    }
  }

  server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) json(res, 500, { error: "server_error", error_description: error.message });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  state.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
