// The bundled development OpenID provider: `oidc-provider` on a loopback port with one demo user,
// so OAuth sign-in works offline in `npm run dev`. The integration and browser tests start the
// same module (tests/support/idp.ts) as their real IdP: discovery, PKCE, nonce, signed ID tokens,
// userinfo, refresh-token rotation, revocation, introspection and RP-initiated logout are
// oidc-provider's, not imitations.
//
// Its own small login page replaces oidc-provider's devInteractions: a plain HTML form (works
// with JavaScript off) that checks the e-mail and password against the configured users, and a
// Cancel button that answers the client with error=access_denied. Consent is implied: this IdP
// only serves Vestibule.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider, { type Configuration, type KoaContextWithOIDC } from "oidc-provider";
import { constantTimeEqual } from "../auth/core/crypto.server";

export type IdpUser = {
  sub: string;
  email: string;
  emailVerified: boolean;
  name: string;
  password: string;
  picture?: string;
  /**
   * Entra ID's claims, for tests of IdPs shaped like it: the tenant (`tid`) and whether the
   * tenant verified the address's domain (`xms_edov`). Absent from every token unless set.
   */
  tid?: string;
  xmsEdov?: boolean;
};

export type IdpClient = {
  clientId: string;
  clientSecret: string;
  /** A web client with exactly these redirect URIs (an app behind TLS); default: any loopback http port. */
  redirectUris?: string[];
  /** The loopback redirect's path (default /auth/callback/oidc): a named provider's is /auth/callback/<name>. */
  callbackPath?: string;
};

export type IdpOptions = {
  /** 0 (default) picks a free port. */
  port?: number;
  /** True: a busy `port` fails the start instead of falling back to a free one (a port the developer chose). */
  strictPort?: boolean;
  /** Host name in the issuer URL; the server always listens on the loopback interface. */
  host?: "localhost" | "127.0.0.1";
  clients?: IdpClient[];
  users?: IdpUser[];
  /** Access token lifetime in seconds (tests shorten it to exercise refresh). */
  accessTokenTtl?: number;
};

export type RunningIdp = {
  issuer: string;
  port: number;
  clients: IdpClient[];
  users: IdpUser[];
  provider: Provider;
  stop: () => Promise<void>;
};

export const DEV_IDP_CLIENT: IdpClient = { clientId: "vestibule-dev", clientSecret: "vestibule-dev-secret-not-for-production" };

/**
 * The clients the dev IdP serves under `npm run dev`: provider `oidc`'s (DEV_IDP_CLIENT), and one
 * for each named provider (AUTH_OIDC_<NAME>_*) whose issuer is the dev IdP's own address on `port`
 * — its AUTH_OIDC_<NAME>_ID and _SECRET, redirecting to /auth/callback/<name> on any loopback port.
 * So a second OpenID provider is tried locally by settings alone (docs/providers.md).
 */
export function devIdpClients(port: number, named: readonly { id: string; issuer: string; clientId: string; clientSecret: string }[]): IdpClient[] {
  const own = new Set(LOOPBACK_HOSTS.map((h) => `http://${h}:${port}`));
  const mine = named.filter((p) => own.has(p.issuer.replace(/\/+$/, "")));
  return [
    DEV_IDP_CLIENT,
    ...mine.map((p) => ({ clientId: p.clientId, clientSecret: p.clientSecret, callbackPath: `/auth/callback/${p.id}` })),
  ];
}
export const DEV_IDP_USER: IdpUser = {
  sub: "dev-user-ada",
  email: "ada@idp.vestibule.dev",
  emailVerified: true,
  name: "Ada Lovelace",
  password: "vestibule-idp",
};
/** The port `npm run dev` tries first (a free one is taken when it is busy); VESTIBULE_DEV_IDP_PORT sets another. */
export const DEV_IDP_PORT = 5556;

/**
 * The dev IdP's port from VESTIBULE_DEV_IDP_PORT's value: unset or empty, DEV_IDP_PORT (falling back
 * to a free port when busy); set, exactly that port (busy: `npm run dev` stops). Anything but a
 * port number stops `npm run dev` with the variable named.
 */
export function devIdpPort(value: string | undefined): { port: number; strictPort: boolean } {
  if (value === undefined || value.trim() === "") return { port: DEV_IDP_PORT, strictPort: false };
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || port < 1 || port > 65535) throw new Error(`VESTIBULE_DEV_IDP_PORT must be a port number, 1 to 65535 (got "${value}")`);
  return { port, strictPort: true };
}

const CALLBACK_PATH = "/auth/callback/oidc";
const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

function esc(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)} · Vestibule dev IdP</title>
<style>body{font-family:system-ui,sans-serif;max-width:22rem;margin:3rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.3rem}label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1rem}.alert{color:#b42318}.muted{color:#667085;font-size:.9rem}</style>
</head><body><h1>${esc(title)}</h1>${body}</body></html>`;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 16 * 1024) throw new Error("form too large");
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function send(res: ServerResponse, status: number, html: string) {
  res.writeHead(status, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
  res.end(html);
}

function loginPage(uid: string, clientName: string, users: IdpUser[], error: string | null, email = "") {
  const hint = users.length === 1 ? `<p class="muted">Demo user: ${esc(users[0]!.email)} / ${esc(users[0]!.password)}</p>` : "";
  return page(
    "Sign in to the dev IdP",
    `<p>${esc(clientName)} asks you to sign in.</p>${hint}
${error ? `<p class="alert" role="alert">${esc(error)}</p>` : ""}
<form method="post" action="/interaction/${esc(uid)}/login" id="idp-login">
<label for="idp-email">Email</label><input id="idp-email" name="email" type="email" autocomplete="username" value="${esc(email)}" required>
<label for="idp-password">Password</label><input id="idp-password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" id="idp-submit">Sign in</button>
</form>
<form method="post" action="/interaction/${esc(uid)}/abort"><button type="submit" id="idp-cancel">Cancel</button></form>`,
  );
}

export async function startDevIdp(options: IdpOptions = {}): Promise<RunningIdp> {
  const host = options.host ?? "localhost";
  const clients = options.clients ?? [DEV_IDP_CLIENT];
  const users = options.users ?? [DEV_IDP_USER];
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => send(res, 503, "starting");
  const server: Server = createServer((req, res) => handler(req, res));
  const port = await listen(server, options.port ?? 0, "127.0.0.1", !options.strictPort);
  const issuer = `http://${host}:${port}`;
  // "localhost" may resolve to ::1 first; answer there too when the system has IPv6 loopback.
  const servers = [server];
  if (host === "localhost") {
    const v6: Server = createServer((req, res) => handler(req, res));
    if (await listen(v6, port, "::1", false).then(() => true, () => false)) servers.push(v6);
  }

  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: `dev-${randomBytes(6).toString("hex")}`, alg: "RS256", use: "sig" };

  const configuration: Configuration = {
    clients: clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      // A native (loopback) client: oidc-provider then accepts these redirect URIs on any port
      // (RFC 8252), which is what a dev server and tests on free ports need.
      application_type: c.redirectUris ? "web" : "native",
      redirect_uris: c.redirectUris ?? LOOPBACK_HOSTS.map((h) => `http://${h}${c.callbackPath ?? CALLBACK_PATH}`),
      post_logout_redirect_uris: LOOPBACK_HOSTS.map((h) => `http://${h}/`),
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    })),
    jwks: { keys: [signingKey as never] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    scopes: ["openid", "offline_access", "email", "profile"],
    claims: { openid: ["sub", "tid"], email: ["email", "email_verified", "xms_edov"], profile: ["name", "picture"] },
    // Profile claims in the ID token too, as most hosted IdPs do.
    conformIdTokenClaims: false,
    responseTypes: ["code"],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      introspection: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          ctx.body = page(
            "Sign out of the dev IdP?",
            `${form}<button type="submit" form="op.logoutForm" name="logout" value="yes" id="idp-logout">Yes, sign me out</button>
<button type="submit" form="op.logoutForm" id="idp-stay">No, stay signed in</button>`,
          );
        },
        postLogoutSuccessSource: async (ctx) => {
          ctx.body = page("Signed out", "<p>You are signed out of the dev IdP.</p>");
        },
      },
    },
    // Refresh tokens for every client, rotated on every use (a reused one is refused).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: () => true,
    ttl: {
      AccessToken: options.accessTokenTtl ?? 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 14 * 24 * 3600,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      Grant: 14 * 24 * 3600,
    },
    findAccount: async (_ctx, sub) => {
      const user = users.find((u) => u.sub === sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        claims: async () => ({
          sub,
          email: user.email,
          email_verified: user.emailVerified,
          name: user.name,
          ...(user.picture ? { picture: user.picture } : {}),
          ...(user.tid ? { tid: user.tid } : {}),
          ...(user.xmsEdov !== undefined ? { xms_edov: user.xmsEdov } : {}),
        }),
      };
    },
    // Consent is implied: the session's grant for this client (one per session, so two tabs
    // authorizing at once share it and both codes stay valid), extended with the scopes asked for.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const { oidc } = ctx;
      if (!oidc.session?.accountId || !oidc.client) return undefined;
      const grantId = oidc.result?.consent?.grantId ?? oidc.session.grantIdFor(oidc.client.clientId);
      const grant =
        (grantId ? await oidc.provider.Grant.find(grantId) : undefined) ??
        new oidc.provider.Grant({ clientId: oidc.client.clientId, accountId: oidc.session.accountId });
      grant.addOIDCScope([...oidc.requestParamScopes].join(" "));
      await grant.save();
      return grant;
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    renderError: async (ctx, out) => {
      ctx.type = "html";
      ctx.body = page("Something went wrong", `<p class="alert">${esc(String(out.error))}: ${esc(String(out.error_description ?? ""))}</p>`);
    },
  };

  const provider = new Provider(issuer, configuration);
  const oidcHandler = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, action: string | undefined) {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) return send(res, 400, page("Sign-in expired", "<p>Start again from the application.</p>"));
    const client = await provider.Client.find(String(details.params.client_id));
    const clientName = client?.clientName ?? "Vestibule";
    // Consent is implied (see loadExistingGrant); oidc-provider still asks native clients for it.
    if (details.prompt.name === "consent") {
      return provider.interactionFinished(req, res, { consent: {} }, { mergeWithLastSubmission: true });
    }
    if (req.method === "GET" && action === undefined) {
      return send(res, 200, loginPage(uid, clientName, users, null));
    }
    if (req.method === "POST" && action === "abort") {
      return provider.interactionFinished(req, res, { error: "access_denied", error_description: "The user cancelled the sign-in." }, { mergeWithLastSubmission: false });
    }
    if (req.method === "POST" && action === "login") {
      const form = await readForm(req);
      const email = (form.get("email") ?? "").trim().toLowerCase();
      const password = form.get("password") ?? "";
      const user = users.find((u) => u.email.toLowerCase() === email);
      if (!user || !constantTimeEqual(user.password, password)) {
        return send(res, 200, loginPage(uid, clientName, users, "Wrong e-mail or password.", email));
      }
      return provider.interactionFinished(req, res, { login: { accountId: user.sub }, consent: {} }, { mergeWithLastSubmission: false });
    }
    send(res, 405, page("Not allowed", ""));
  }

  handler = (req, res) => {
    const match = /^\/interaction\/([\w-]+)(?:\/(login|abort))?$/.exec(new URL(req.url ?? "/", issuer).pathname);
    if (!match) return oidcHandler(req, res);
    interaction(req, res, match[1]!, match[2]).catch((error: Error) => {
      // An unknown or expired interaction: oidc-provider throws SessionNotFound.
      if (!res.headersSent) send(res, 400, page("Sign-in expired", `<p>${esc(error.message)}</p><p>Start again from the application.</p>`));
    });
  };

  return {
    issuer,
    port,
    clients,
    users,
    provider,
    stop: async () => {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.closeAllConnections();
              s.close(() => resolve());
            }),
        ),
      );
    },
  };
}

function listen(server: Server, port: number, address: string, fallback = true): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off("error", onError);
      // The preferred dev port is taken: any free port will do.
      if (fallback && error.code === "EADDRINUSE" && port !== 0) listen(server, 0, address).then(resolve, reject);
      else reject(error);
    };
    server.once("error", onError);
    server.listen(port, address, () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
