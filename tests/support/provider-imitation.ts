// A local imitation of an OAuth 2.0 / OpenID provider's endpoints, for the presets' tests: one
// HTTP server on a loopback port that answers the paths a preset uses (the preset is pointed at
// it by presetDefinition's `origin` test hook, or by its AUTH_<PRESET>_ISSUER) in the provider's
// own shapes, which each test sets:
//   GET  …?response_type=code            the authorization endpoint: a redirect back with code
//                                         and state, or (response_mode=form_post) Apple's page
//                                         that POSTs them with extra fields
//   GET  <issuer>/.well-known/openid-configuration, GET /jwks
//   POST …  grant_type=authorization_code the token endpoint: checks the client's authentication
//                                         (Basic or in the body, as the test expects), the code,
//                                         the redirect URI and the PKCE verifier; an ID token
//                                         (RS256, the nonce of the request) for OpenID providers
//   GET  anything else with the Bearer access token: the JSON the test gave for that path
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";

export type ImitationSettings = {
  /** OpenID providers: the path of the issuer on the imitation ("" = the origin itself). */
  issuerPath?: string;
  /** What the discovery document and the ID token state as `iss`, when not the issuer URL (Auth0's trailing "/"). */
  statedIssuer?: (issuer: string) => string;
  /** Claims of the ID token besides iss/aud/exp/iat/nonce; no ID token when absent. */
  idToken?: Record<string, unknown>;
  /** The userinfo endpoint's answer (discovery names /userinfo when set). */
  userinfo?: Record<string, unknown>;
  /** API answers by path (with its query, or the path alone) for GETs with the Bearer token. */
  api?: Record<string, unknown>;
  /** How the client must authenticate at the token endpoint. */
  clientAuth: "client_secret_basic" | "client_secret_post";
  /** The client secret's check (default: equal to the client's secret). */
  checkSecret?: (secret: string) => Promise<boolean> | boolean;
  /** Extra members of the token response, in the provider's shape (Twitch's `scope` array). */
  tokenExtras?: Record<string, unknown>;
  /** Extra fields of a form_post answer (Apple's `user`). */
  formPostFields?: Record<string, string>;
};

export type SeenRequest = { method: string; path: string; headers: IncomingHttpHeaders; body: string };

export type Imitation = {
  origin: string;
  /** The issuer URL for the current settings (origin + issuerPath). */
  issuer: string;
  client: { clientId: string; clientSecret: string };
  requests: SeenRequest[];
  /** The last authorization request's parameters. */
  authorization: URLSearchParams | null;
  set(settings: ImitationSettings): void;
  stop(): Promise<void>;
};

type Grant = { redirectUri: string; challenge: string | null; nonce: string | null };

export async function startImitation(): Promise<Imitation> {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const kid = `imitation-${randomBytes(4).toString("hex")}`;
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
  const client = { clientId: "imitation-client", clientSecret: "imitation-secret-0123456789" };
  const codes = new Map<string, Grant>();
  const accessTokens = new Set<string>();
  let settings: ImitationSettings = { clientAuth: "client_secret_basic" };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const url = new URL(req.url ?? "/", imitation.origin);
      imitation.requests.push({ method: req.method ?? "GET", path: url.pathname + url.search, headers: req.headers, body });
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store" });
        res.end(JSON.stringify(value));
      };
      void answer(req.method ?? "GET", url, req.headers, body, json, res).catch((error: unknown) => json(500, { error: String(error) }));
    });
  });

  async function answer(
    method: string,
    url: URL,
    headers: IncomingHttpHeaders,
    body: string,
    json: (status: number, value: unknown) => void,
    res: import("node:http").ServerResponse,
  ) {
    const issuer = imitation.issuer;
    const stated = settings.statedIssuer ? settings.statedIssuer(issuer) : issuer;
    if (method === "GET" && url.pathname === `${settings.issuerPath ?? ""}/.well-known/openid-configuration`) {
      return json(200, {
        issuer: stated,
        authorization_endpoint: `${imitation.origin}/authorize`,
        token_endpoint: `${imitation.origin}/token`,
        ...(settings.userinfo ? { userinfo_endpoint: `${imitation.origin}/userinfo` } : {}),
        jwks_uri: `${imitation.origin}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
      });
    }
    if (method === "GET" && url.pathname === "/jwks") return json(200, { keys: [jwk] });
    if (method === "GET" && url.searchParams.get("response_type") === "code") {
      const p = url.searchParams;
      imitation.authorization = p;
      const code = randomBytes(16).toString("base64url");
      codes.set(code, { redirectUri: p.get("redirect_uri")!, challenge: p.get("code_challenge"), nonce: p.get("nonce") });
      const fields: Record<string, string> = { code, ...(p.get("state") ? { state: p.get("state")! } : {}) };
      if (p.get("response_mode") === "form_post") {
        Object.assign(fields, settings.formPostFields ?? {});
        const inputs = Object.entries(fields)
          .map(([k, v]) => `<input type="hidden" name="${k}" value="${v.replace(/&/g, "&amp;").replace(/"/g, "&quot;")}">`)
          .join("");
        res.writeHead(200, { "Content-Type": "text/html" });
        return res.end(`<form method="post" action="${p.get("redirect_uri")}">${inputs}</form>`);
      }
      const back = new URL(p.get("redirect_uri")!);
      for (const [k, v] of Object.entries(fields)) back.searchParams.set(k, v);
      res.writeHead(302, { Location: back.href });
      return res.end();
    }
    if (method === "POST") {
      const form = new URLSearchParams(body);
      if (form.get("grant_type") !== "authorization_code") return json(400, { error: "unsupported_grant_type" });
      let id: string | null = null;
      let secret: string | null = null;
      const basic = /^Basic (.+)$/.exec(headers.authorization ?? "");
      if (settings.clientAuth === "client_secret_basic" && basic) {
        [id, secret] = Buffer.from(basic[1]!, "base64").toString("utf8").split(":").map(decodeURIComponent) as [string, string];
      } else if (settings.clientAuth === "client_secret_post" && !basic) {
        id = form.get("client_id");
        secret = form.get("client_secret");
      }
      const secretOk = secret !== null && (settings.checkSecret ? await settings.checkSecret(secret) : secret === client.clientSecret);
      if (id !== client.clientId || !secretOk) return json(401, { error: "invalid_client" });
      const grant = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      if (!grant || grant.redirectUri !== form.get("redirect_uri")) return json(400, { error: "invalid_grant" });
      const verifier = form.get("code_verifier");
      if (grant.challenge && (!verifier || createHash("sha256").update(verifier).digest("base64url") !== grant.challenge)) {
        return json(400, { error: "invalid_grant", error_description: "PKCE" });
      }
      const accessToken = randomBytes(16).toString("base64url");
      accessTokens.add(accessToken);
      const answer: Record<string, unknown> = { access_token: accessToken, token_type: "Bearer", expires_in: 3600, ...settings.tokenExtras };
      if (settings.idToken) {
        answer.id_token = await new SignJWT({ ...settings.idToken, ...(grant.nonce ? { nonce: grant.nonce } : {}) })
          .setProtectedHeader({ alg: "RS256", kid })
          .setIssuer(stated)
          .setAudience(client.clientId)
          .setIssuedAt()
          .setExpirationTime("5m")
          .sign(privateKey);
      }
      return json(200, answer);
    }
    const bearer = /^Bearer (.+)$/i.exec(headers.authorization ?? "")?.[1];
    if (method === "GET" && bearer && accessTokens.has(bearer)) {
      if (url.pathname === "/userinfo" && settings.userinfo) return json(200, settings.userinfo);
      const api = settings.api ?? {};
      const value = api[url.pathname + url.search] ?? api[url.pathname];
      if (value !== undefined) return json(200, value);
    }
    return json(404, { error: "not_found", path: url.pathname });
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const imitation: Imitation = {
    origin,
    get issuer() {
      return `${origin}${settings.issuerPath ?? ""}`;
    },
    client,
    requests: [],
    authorization: null,
    set(next) {
      settings = next;
      imitation.requests.length = 0;
      imitation.authorization = null;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return imitation;
}
