// npm run conformance -- [--url http://127.0.0.1:3000] [--email E] [--scenario NAME]
// npm run conformance -- --authorization [--url …] [--port 3000] [--scenario NAME]
// The MCP conformance suite (@modelcontextprotocol/conformance, pinned in package.json) against
// the /mcp example of a running Vestibule (`npm start` with AUTH_PROVIDER=true), as
// docs/features/mcp.md#conformance explains.
//
// With --authorization, the suite's authorization-server scenarios instead, against Vestibule's
// provider: they are only in the package's 0.2 pre-releases, pinned as
// @modelcontextprotocol/conformance-authorization (ADR 181). The command adds a public client for
// the run (its redirect URI the suite's loopback callback, any port), runs them, and removes the
// client. The code-grant scenario prints an authorization URL: a person opens it, signs in and
// allows the app, as for any app; the suite waits for its callback (up to five minutes).
//
// The package's server scenarios connect as an MCP client with no way to send a token, and /mcp
// answers 401 without one; so the run goes through a local forwarder that adds
// `Authorization: Bearer <token>` to every request, the token signed here with the provider's own
// key (scripts/access-token.ts) for AUTH_URL/mcp — for the user --email names, else for a client
// of its own ("conformance", like a client-credentials token). Scenarios the example server
// cannot pass by design (it has one tool and no resources, prompts, logging or streams) are listed
// in conformance-baseline.yml: the run fails on any other failure, and on a listed one that passes.
// The package (0.1.16) has no authorization-server scenarios; its auth scenarios test a client
// against its own mock servers.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { getConfig } from "../app/auth/core/config.server";
import { db } from "../app/db/client.server";
import { addClient, removeClientRows } from "../app/auth/provider/clients.server";
import { signAccessToken } from "./access-token";
import { Refused, runCommand } from "./admin-cli";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CLI = path.join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
/** The pre-release with the authorization-server scenarios (ADR 181). */
const AUTHORIZATION_CLI = path.join(root, "node_modules/@modelcontextprotocol/conformance-authorization/dist/index.js");
/** Where the suite's code-grant scenario takes its callback: a loopback redirect, any port (RFC 8252). */
const AUTHORIZATION_REDIRECT_URI = "http://127.0.0.1/callback";
const BASELINE = path.join(root, "conformance-baseline.yml");
/** Long enough for a full run on a slow machine; the token is for this run only. */
const TOKEN_LIFETIME_SECONDS = 30 * 60;
/** The client the run's token names (a client credentials token's subject when no --email is given). */
const CLIENT_ID = "conformance";

/** Forwards every request to `target`, adding the bearer token; the target's own Host. */
function forwarder(target: URL, token: string) {
  return createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const upstream = send(
      {
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, host: target.host, authorization: `Bearer ${token}` },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on("error", () => {
      if (!outgoing.headersSent) outgoing.writeHead(502);
      outgoing.end();
    });
    incoming.pipe(upstream);
  });
}

/** Runs the conformance CLI at `cli` with `args`, its output this command's; its exit code. */
function runSuite(cli: string, args: string[]): Promise<number> {
  return new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "inherit", "inherit"], cwd: root });
    child.on("exit", (exitCode) => resolve(exitCode ?? 1));
  });
}

/**
 * The authorization-server scenarios against the provider at `target` (its issuer), with a public
 * client added for the run and removed after it, for the resource AUTH_URL/mcp.
 */
async function authorizationScenarios(target: URL, values: Record<string, string | boolean | undefined>, io: { fail(): void }): Promise<string> {
  const port = typeof values.port === "string" ? values.port : "3000";
  if (!/^[1-9]\d{0,4}$/.test(port) || Number(port) > 65_535) throw new Refused(`--port must be a port number (1–65535), not "${port}"`);
  const { client } = await addClient({ name: "MCP conformance suite", redirectUris: [AUTHORIZATION_REDIRECT_URI], public: true, source: "cli" });
  try {
    const args = ["authorization", "--url", target.origin, "--client-id", client.clientId, "--resource", `${target.origin}/mcp`, "--port", port];
    if (typeof values.scenario === "string") args.push("--scenario", values.scenario);
    const code = await runSuite(AUTHORIZATION_CLI, args);
    if (code !== 0) io.fail();
    return code === 0
      ? `conformance: every authorization-server scenario passed (against ${target.origin})`
      : `conformance: an authorization-server scenario failed (exit ${code})`;
  } finally {
    await removeClientRows(client.clientId);
  }
}

runCommand(
  "conformance",
  "npm run conformance -- [--url <the running server's origin>] [--email <user>] [--scenario <name>] | --authorization [--url <origin>] [--port <callback port>] [--scenario <name>]",
  { url: { type: "string" }, email: { type: "string" }, scenario: { type: "string" }, authorization: { type: "boolean" }, port: { type: "string" } },
  async (values, io) => {
    const config = getConfig();
    if (!config.provider) throw new Refused("the OAuth provider is off (AUTH_PROVIDER=true turns it on, with AUTH_URL)");
    const target = new URL(typeof values.url === "string" ? values.url : config.provider.issuer);
    if (values.authorization) return authorizationScenarios(target, values, io);
    let sub = CLIENT_ID;
    // A user's token is refused unless the user has a grant for its client (requireBearer): the
    // grant consent would leave, for this run only, removed at the end.
    let grantId: string | null = null;
    if (typeof values.email === "string") {
      const user = await db().user.findUnique({ where: { email: values.email.trim().toLowerCase() }, select: { id: true } });
      if (!user) throw new Refused(`no user with the address ${values.email}`);
      sub = user.id;
      grantId = `conformance-${randomUUID()}`;
      await db().oAuthPayload.create({
        data: { kind: "Grant", id: grantId, payload: "{}", accountId: user.id, clientId: CLIENT_ID, expiresAt: new Date(Date.now() + TOKEN_LIFETIME_SECONDS * 1000) },
      });
    }
    const token = await signAccessToken({ resourcePath: "/mcp", sub, clientId: CLIENT_ID, scope: "openid email profile", lifetimeSeconds: TOKEN_LIFETIME_SECONDS });
    const proxy = forwarder(target, token);
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const port = (proxy.address() as AddressInfo).port;
    try {
      const args = ["server", "--url", `http://127.0.0.1:${port}/mcp`, "--expected-failures", BASELINE];
      if (typeof values.scenario === "string") args.push("--scenario", values.scenario);
      const code = await runSuite(CLI, args);
      if (code !== 0) io.fail();
      return code === 0
        ? `conformance: every scenario passed or failed as conformance-baseline.yml expects (against ${target.origin}/mcp)`
        : `conformance: a scenario failed that conformance-baseline.yml does not list, or a listed one passed (exit ${code})`;
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
      if (grantId) await db().oAuthPayload.deleteMany({ where: { kind: "Grant", id: grantId } });
    }
  },
  { migrate: false },
);
