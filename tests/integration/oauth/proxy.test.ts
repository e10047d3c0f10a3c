// Outbound requests through a company proxy (app/auth/core/outbound-fetch.server.ts): with
// HTTP_PROXY/HTTPS_PROXY set, every call Vestibule makes — OpenID discovery, token, JWKS,
// userinfo, the breach check — goes through a local CONNECT proxy that records what it tunnelled;
// NO_PROXY sends the hosts it names direct; and a certificate authority given by
// NODE_EXTRA_CA_CERTS is trusted for a TLS connection through the tunnel (a child process, since
// Node reads that variable at start).
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { closeOutboundProxies } from "../../../app/auth/core/outbound-fetch.server.ts";
import { breached } from "../../../app/auth/credentials/password-policy.server.ts";
import { startRecordingProxy, type RecordingProxy } from "../../support/connect-proxy.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { ALICE, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { sessionOf, signInThroughIdp } from "../../support/oauth-flow.ts";

const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"];

let idp: TestIdp;
let proxy: RecordingProxy;

function setProxyEnv(env: Record<string, string>) {
  for (const name of PROXY_VARIABLES) delete process.env[name];
  Object.assign(process.env, env);
}

beforeAll(async () => {
  [idp, proxy] = await Promise.all([startTestIdp(), startRecordingProxy()]);
  idp.configure();
});
afterAll(async () => {
  setProxyEnv({});
  await closeOutboundProxies();
  await Promise.all([idp?.stop(), proxy?.stop()]);
});
beforeEach(async () => {
  proxy.clear();
  idp.configure();
  await resetDatabase();
});
afterEach(async () => {
  setProxyEnv({});
  await closeOutboundProxies();
});

const idpHost = () => new URL(idp.issuer).host;

describe(`Outbound requests through a proxy (${dbLabel})`, () => {
  test("HTTP_PROXY: discovery, token, JWKS and userinfo of an OpenID sign-in all go through the proxy", async () => {
    setProxyEnv({ HTTP_PROXY: proxy.url });
    const jar = new CookieJar();
    await signInThroughIdp(jar, ALICE);
    expect((await sessionOf(jar))?.user.email).toBe(ALICE.email);
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(new Set(proxy.tunnels)).toEqual(new Set([idpHost()]));
    const paths = proxy.requests.map((r) => r.replace(/\?.*$/, ""));
    for (const call of ["GET /.well-known/openid-configuration", "POST /token", "GET /jwks", "GET /me"]) expect(paths, call).toContain(call);
    expect(proxy.refused).toEqual([]);
  });

  test("the lower-case http_proxy works too; NO_PROXY naming the IdP's host sends everything direct", async () => {
    setProxyEnv({ http_proxy: proxy.url });
    await signInThroughIdp(new CookieJar(), ALICE);
    expect(proxy.tunnels).toContain(idpHost());

    proxy.clear();
    idp.configure(); // fresh configuration and caches: the next sign-in discovers again
    setProxyEnv({ HTTP_PROXY: proxy.url, NO_PROXY: `example.com, ${new URL(idp.issuer).hostname}` });
    const jar = new CookieJar();
    await signInThroughIdp(jar, ALICE);
    expect((await sessionOf(jar))?.user.email).toBe(ALICE.email);
    expect(proxy.tunnels).toEqual([]);
  });

  test("the breach check goes through the proxy, and NO_PROXY bypasses it", async () => {
    const range = await startRangeServer();
    try {
      setProxyEnv({ HTTP_PROXY: proxy.url });
      // SHA-1("password") = 5BAA6 1E4C9B93F3F0682250B6CF8331B7EE68FD8: listed.
      expect(await breached("password", range.url, "Vestibule")).toBe(true);
      expect(proxy.tunnels).toEqual([new URL(range.url).host]);
      expect(proxy.requests).toEqual(["GET /range/5BAA6"]);

      proxy.clear();
      setProxyEnv({ HTTP_PROXY: proxy.url, NO_PROXY: "127.0.0.1" });
      expect(await breached("password", range.url, "Vestibule")).toBe(true);
      expect(proxy.tunnels).toEqual([]);
      expect(range.hits()).toBe(2);
    } finally {
      await range.stop();
    }
  });
});

describe("NODE_EXTRA_CA_CERTS through an HTTPS_PROXY tunnel", () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
  const tsx = createRequire(import.meta.url).resolve("tsx/cli");
  let dir: string;
  let https: Server;
  let target: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "vestibule-ca-"));
    const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
    ssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=Vestibule test CA");
    ssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
    writeFileSync(path.join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1\n");
    ssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "1", "-extfile", "san.ext");
    https = createHttpsServer({ key: readFileSync(path.join(dir, "server.key")), cert: readFileSync(path.join(dir, "server.pem")) }, (_req, res) => res.end("company-internal"));
    await new Promise<void>((resolve) => https.listen(0, "127.0.0.1", resolve));
    target = `https://127.0.0.1:${(https.address() as AddressInfo).port}/metadata`;
    writeFileSync(
      path.join(dir, "fetch.mts"),
      `import { outboundFetch } from ${JSON.stringify(path.join(root, "app/auth/core/outbound-fetch.server.ts"))};\n` +
        `const res = await outboundFetch(process.argv[2]!);\nconsole.log(res.status, await res.text());\n`,
    );
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (https ? https.close(() => resolve()) : resolve()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function fetchInChild(env: Record<string, string>): Promise<{ code: number; out: string }> {
    const base = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
    return new Promise((resolve) => {
      execFile(process.execPath, [tsx, path.join(dir, "fetch.mts"), target], { cwd: root, env: { ...base, ...env } }, (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
      });
    });
  }

  test("the company's CA, given by NODE_EXTRA_CA_CERTS, is trusted through the tunnel; without it the certificate is refused", async () => {
    proxy.clear();
    const trusted = await fetchInChild({ HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: path.join(dir, "ca.pem") });
    expect(trusted).toMatchObject({ code: 0, out: expect.stringContaining("200 company-internal") });
    expect(proxy.tunnels).toEqual([new URL(target).host]);

    const untrusted = await fetchInChild({ HTTPS_PROXY: proxy.url });
    expect(untrusted.code).not.toBe(0);
    // The tunnel was open: what failed is the certificate.
    expect(proxy.tunnels).toEqual([new URL(target).host, new URL(target).host]);
    expect(untrusted.out).toMatch(/certificate|self[- ]signed|UNABLE_TO_VERIFY|fetch failed/i);
  });
});

async function startRangeServer(): Promise<{ url: string; hits: () => number; stop: () => Promise<void> }> {
  let count = 0;
  const server = createHttpServer((req, res) => {
    count++;
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end(req.url === "/range/5BAA6" ? "1E4C9B93F3F0682250B6CF8331B7EE68FD8:9659365\r\n0018A45C4D1DEF81644B54AB7F969B88D65:0" : "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: () => count,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
