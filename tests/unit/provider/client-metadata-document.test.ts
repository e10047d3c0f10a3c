// Client ID metadata documents: the SSRF guard and the document's checks, over real HTTP from a
// local server. A fake resolver (the module's test seam) gives each test host the addresses a
// real DNS answer could; every address it gives is checked as it would be in production, and the
// seam then points the connection for a checked public address at the local server.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  CLIENT_METADATA_DOCUMENT_MAX_IN_FLIGHT,
  applicationTypeOf,
  cacheSecondsFrom,
  CLIENT_METADATA_DOCUMENT_CACHE_ENTRIES,
  CLIENT_METADATA_DOCUMENT_CACHE_MAX_SECONDS,
  CLIENT_METADATA_DOCUMENT_MAX_BYTES,
  CLIENT_METADATA_DOCUMENT_TIMEOUT_MS,
  ClientMetadataDocumentError,
  clientMetadataDocumentCacheSize,
  clientMetadataForEngine,
  isClientMetadataDocumentUrl,
  isPublicAddress,
  loadClientMetadataDocument,
  setClientMetadataDocumentTestSeam,
  type ResolvedAddress,
} from "../../../app/auth/provider/client-metadata-document.server";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Handler>();
const hits: { path: string; host: string | undefined }[] = [];
let server: Server;
let port: number;
/** Host name → what the fake resolver answers (a function: a new answer for each call). */
const dns = new Map<string, () => ResolvedAddress[]>();
const resolved: string[] = [];
const connectedTo: string[] = [];

const PUBLIC_V4 = "93.184.215.14";
const PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c";

function docUrl(host: string, path: string) {
  return `http://${host}:${port}${path}`;
}

function serveJson(path: string, body: unknown, headers: Record<string, string> = {}) {
  routes.set(path, (_req, res) => {
    res.writeHead(200, { "Content-Type": "application/json", ...headers });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  });
}

function validDoc(url: string, extra: Record<string, unknown> = {}) {
  return { client_id: url, client_name: "Example MCP client", redirect_uris: ["http://127.0.0.1/callback"], ...extra };
}

async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ClientMetadataDocumentError) return error.reason;
    throw error;
  }
  throw new Error("expected the document to be refused");
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    hits.push({ path, host: req.headers.host });
    const handler = routes.get(path);
    if (handler) return handler(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  routes.clear();
  hits.length = 0;
  dns.clear();
  resolved.length = 0;
  connectedTo.length = 0;
  dns.set("client.example", () => [{ address: PUBLIC_V4, family: 4 }]);
  setClientMetadataDocumentTestSeam({
    allowHttp: true,
    resolve: async (hostname) => {
      resolved.push(hostname);
      const answer = dns.get(hostname);
      if (!answer) throw new Error("ENOTFOUND");
      return answer();
    },
    connectTo: (checked) => {
      connectedTo.push(checked.address);
      return { address: "127.0.0.1", family: 4 };
    },
  });
});

afterEach(() => setClientMetadataDocumentTestSeam(null));

describe("the fetch", () => {
  it("fetches a valid document from the resolved, checked address, naming the host in Host", async () => {
    const url = docUrl("client.example", "/oauth/client.json");
    serveJson("/oauth/client.json", validDoc(url));
    const metadata = await clientMetadataForEngine(url);
    expect(metadata).toEqual({
      client_id: url,
      client_name: "Example MCP client",
      redirect_uris: ["http://127.0.0.1/callback"],
      application_type: "native",
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code"],
      response_types: ["code"],
    });
    expect(resolved).toEqual(["client.example"]);
    expect(connectedTo).toEqual([PUBLIC_V4]);
    expect(hits).toEqual([{ path: "/oauth/client.json", host: `client.example:${port}` }]);
  });

  it("accepts a host whose only addresses are public IPv6 ones", async () => {
    dns.set("v6.example", () => [{ address: PUBLIC_V6, family: 6 }]);
    const url = docUrl("v6.example", "/c.json");
    serveJson("/c.json", validDoc(url));
    expect((await loadClientMetadataDocument(url)).client_id).toBe(url);
    expect(connectedTo).toEqual([PUBLIC_V6]);
  });

  const forbidden: [string, string][] = [
    ["10/8", "10.1.2.3"],
    ["172.16/12 (low end)", "172.16.0.1"],
    ["172.16/12 (high end)", "172.31.255.254"],
    ["192.168/16", "192.168.1.10"],
    ["127/8", "127.0.0.1"],
    ["127/8 (not .1)", "127.53.0.9"],
    ["169.254/16 (cloud metadata)", "169.254.169.254"],
    ["0.0.0.0", "0.0.0.0"],
    ["100.64/10 (shared, carrier NAT)", "100.100.100.200"],
    ["multicast", "224.0.0.251"],
    ["broadcast", "255.255.255.255"],
    ["documentation", "192.0.2.1"],
    ["benchmarking", "198.18.0.1"],
    ["::1", "::1"],
    ["::", "::"],
    ["fe80::/10", "fe80::1"],
    ["fe80::/10 (upper part)", "febf::1"],
    ["fc00::/7", "fc00::1"],
    ["fc00::/7 (fd)", "fd12:3456:789a::1"],
    ["IPv4-mapped loopback (dotted)", "::ffff:127.0.0.1"],
    ["IPv4-mapped private (hex)", "::ffff:a00:1"],
    ["IPv4-mapped public too", "::ffff:93.184.215.14"],
    ["NAT64", "64:ff9b::a00:1"],
    ["6to4", "2002:a00:1::1"],
    ["Teredo", "2001:0:4136:e378::1"],
    ["IPv6 documentation", "2001:db8::1"],
    ["IPv6 multicast", "ff02::1"],
    ["site-local (deprecated)", "fec0::1"],
  ];
  for (const [name, address] of forbidden) {
    it(`refuses a host resolving to ${name} (${address}) and never connects`, async () => {
      dns.set("evil.example", () => [{ address, family: address.includes(":") ? 6 : 4 }]);
      const url = docUrl("evil.example", "/c.json");
      serveJson("/c.json", validDoc(url));
      expect(await failure(loadClientMetadataDocument(url))).toBe("forbidden_address");
      expect(connectedTo).toEqual([]);
      expect(hits).toEqual([]);
    });
  }

  it("refuses a name with one public and one private address (every answer must be public)", async () => {
    dns.set("mixed.example", () => [
      { address: PUBLIC_V4, family: 4 },
      { address: "10.0.0.5", family: 4 },
    ]);
    const url = docUrl("mixed.example", "/c.json");
    serveJson("/c.json", validDoc(url));
    expect(await failure(loadClientMetadataDocument(url))).toBe("forbidden_address");
    expect(hits).toEqual([]);
  });

  it("refuses an address literal in the URL without asking the resolver", async () => {
    for (const host of ["127.0.0.1", "[::1]", "169.254.169.254", "[::ffff:7f00:1]"]) {
      const url = `http://${host}:${port}/c.json`;
      serveJson("/c.json", validDoc(url));
      expect(await failure(loadClientMetadataDocument(url))).toBe("forbidden_address");
    }
    expect(resolved).toEqual([]);
    expect(hits).toEqual([]);
  });

  it("resolves once and connects to the address it checked (a rebinding answer has no second chance)", async () => {
    let calls = 0;
    dns.set("rebind.example", () => (++calls === 1 ? [{ address: PUBLIC_V4, family: 4 }] : [{ address: "127.0.0.1", family: 4 }]));
    const url = docUrl("rebind.example", "/c.json");
    serveJson("/c.json", validDoc(url), { "Cache-Control": "no-store" });
    await loadClientMetadataDocument(url);
    expect(calls).toBe(1);
    expect(connectedTo).toEqual([PUBLIC_V4]);
    // The next fetch asks again (no-store), gets the private address, and is refused.
    expect(await failure(loadClientMetadataDocument(url))).toBe("forbidden_address");
    expect(calls).toBe(2);
    expect(connectedTo).toEqual([PUBLIC_V4]);
  });

  it("reports a name that does not resolve", async () => {
    expect(await failure(loadClientMetadataDocument(docUrl("nowhere.example", "/c.json")))).toBe("unresolvable");
  });

  it("follows no redirect", async () => {
    const url = docUrl("client.example", "/moved.json");
    for (const status of [301, 302, 303, 307, 308]) {
      routes.set("/moved.json", (_req, res) => res.writeHead(status, { Location: "http://169.254.169.254/latest/meta-data/" }).end());
      expect(await failure(loadClientMetadataDocument(url))).toBe("redirect");
    }
    expect(hits.map((h) => h.path)).toEqual(Array(5).fill("/moved.json"));
  });

  it("refuses any answer but 200", async () => {
    const url = docUrl("client.example", "/c.json");
    expect(await failure(loadClientMetadataDocument(url))).toBe("bad_status");
    routes.set("/c.json", (_req, res) => res.writeHead(500).end("{}"));
    expect(await failure(loadClientMetadataDocument(url))).toBe("bad_status");
  });

  it("gives up on a body that trickles past the deadline", async () => {
    setClientMetadataDocumentTestSeam({
      allowHttp: true,
      resolve: async () => [{ address: PUBLIC_V4, family: 4 }],
      connectTo: () => ({ address: "127.0.0.1", family: 4 }),
      timeoutMs: 300,
    });
    const url = docUrl("client.example", "/slow.json");
    let stalled = false;
    routes.set("/slow.json", (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write('{"client_id":');
      stalled = true; // never ends: only the deadline can end this fetch
    });
    expect(await failure(loadClientMetadataDocument(url))).toBe("timeout");
    expect(stalled).toBe(true);
  });

  it("fetches at most CLIENT_METADATA_DOCUMENT_MAX_IN_FLIGHT documents at once: one more is refused (busy) without a connection; the caller's limit runs before each fetch", async () => {
    setClientMetadataDocumentTestSeam({
      allowHttp: true,
      resolve: async () => [{ address: PUBLIC_V4, family: 4 }],
      connectTo: () => ({ address: "127.0.0.1", family: 4 }),
      timeoutMs: 500,
    });
    routes.set("/held.json", () => {});
    const held = Array.from({ length: CLIENT_METADATA_DOCUMENT_MAX_IN_FLIGHT }, (_, i) => failure(loadClientMetadataDocument(docUrl("client.example", `/held.json?n=${i}`))));
    const before = hits.length;
    expect(await failure(loadClientMetadataDocument(docUrl("client.example", "/held.json?n=extra")))).toBe("busy");
    expect(await Promise.all(held)).toEqual(held.map(() => "timeout"));
    expect(hits.length - before).toBeLessThanOrEqual(CLIENT_METADATA_DOCUMENT_MAX_IN_FLIGHT);
    // Once they are done, fetches go again — after the caller's check, which may refuse.
    serveJson("/ok.json", validDoc(docUrl("client.example", "/ok.json")));
    let checked = 0;
    await loadClientMetadataDocument(docUrl("client.example", "/ok.json"), async () => void checked++);
    expect(checked).toBe(1);
    const refuse = async () => {
      throw new ClientMetadataDocumentError("rate_limited");
    };
    serveJson("/other.json", validDoc(docUrl("client.example", "/other.json")));
    expect(await failure(loadClientMetadataDocument(docUrl("client.example", "/other.json"), refuse))).toBe("rate_limited");
  });

  it("gives up on a server that never answers", async () => {
    setClientMetadataDocumentTestSeam({
      allowHttp: true,
      resolve: async () => [{ address: PUBLIC_V4, family: 4 }],
      connectTo: () => ({ address: "127.0.0.1", family: 4 }),
      timeoutMs: 300,
    });
    routes.set("/silent.json", () => {});
    expect(await failure(loadClientMetadataDocument(docUrl("client.example", "/silent.json")))).toBe("timeout");
  });

  it("the deadline is 5 s and the body limit 5 KB", () => {
    expect(CLIENT_METADATA_DOCUMENT_TIMEOUT_MS).toBe(5_000);
    expect(CLIENT_METADATA_DOCUMENT_MAX_BYTES).toBe(5_120);
  });

  it("refuses a body over 5 KB, declared or streamed", async () => {
    const url = docUrl("client.example", "/big.json");
    const big = JSON.stringify(validDoc(url, { client_name: "x".repeat(6_000) }));
    serveJson("/big.json", big);
    expect(await failure(loadClientMetadataDocument(url))).toBe("too_large");
    routes.set("/big.json", (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
      for (let i = 0; i < 100; i++) res.write(" ".repeat(1_000));
      res.end(JSON.stringify(validDoc(url)));
    });
    expect(await failure(loadClientMetadataDocument(url))).toBe("too_large");
  });

  it("accepts a document of exactly 5 KB", async () => {
    const url = docUrl("client.example", "/full.json");
    const base = JSON.stringify(validDoc(url));
    serveJson("/full.json", base + " ".repeat(CLIENT_METADATA_DOCUMENT_MAX_BYTES - Buffer.byteLength(base)));
    expect((await loadClientMetadataDocument(url)).client_id).toBe(url);
  });

  it("is https: only without the test seam, and the seam is refused in production", async () => {
    setClientMetadataDocumentTestSeam(null);
    const url = docUrl("client.example", "/c.json");
    serveJson("/c.json", validDoc(url));
    expect(await failure(loadClientMetadataDocument(url))).toBe("invalid_url");
    expect(await clientMetadataForEngine(url)).toBeUndefined();
    expect(hits).toEqual([]);
    const before = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    try {
      expect(() => setClientMetadataDocumentTestSeam({ allowHttp: true })).toThrow(/not available in production/);
    } finally {
      process.env.NODE_ENV = before;
    }
  });

  it("without the seam, the system resolver's answer for localhost is refused", async () => {
    setClientMetadataDocumentTestSeam(null);
    expect(await failure(loadClientMetadataDocument("https://localhost/client.json"))).toBe("forbidden_address");
  });
});

describe("the document", () => {
  async function refusedFor(body: unknown, path = "/d.json") {
    serveJson(path, body, { "Cache-Control": "no-store" });
    return failure(loadClientMetadataDocument(docUrl("client.example", path)));
  }
  const url = () => docUrl("client.example", "/d.json");

  it("must name its own URL as client_id, exactly", async () => {
    expect(await refusedFor(validDoc("https://other.example/d.json"))).toBe("client_id_mismatch");
    expect(await refusedFor(validDoc(`${url()}?x=1`))).toBe("client_id_mismatch");
    expect(await refusedFor(validDoc(url().toUpperCase()))).toBe("client_id_mismatch");
    expect(await refusedFor({ redirect_uris: ["http://127.0.0.1/cb"] })).toBe("client_id_mismatch");
  });

  it("must be a JSON object", async () => {
    expect(await refusedFor("not json")).toBe("not_json");
    expect(await refusedFor([validDoc(url())])).toBe("invalid_document");
    expect(await refusedFor("null")).toBe("invalid_document");
  });

  it("cannot hold a secret or ask for a shared-secret authentication", async () => {
    expect(await refusedFor(validDoc(url(), { client_secret: "s" }))).toBe("invalid_document");
    expect(await refusedFor(validDoc(url(), { client_secret_expires_at: 0 }))).toBe("invalid_document");
    for (const method of ["client_secret_basic", "client_secret_post", "client_secret_jwt", "tls_client_auth"]) {
      expect(await refusedFor(validDoc(url(), { token_endpoint_auth_method: method }))).toBe("invalid_document");
    }
  });

  it("is a public client with PKCE only: private_key_jwt and a jwks_uri are refused (no key fetched from anyone's URL, no client that can authenticate)", async () => {
    expect(await refusedFor(validDoc(url(), { token_endpoint_auth_method: "private_key_jwt" }))).toBe("invalid_document");
    expect(await refusedFor(validDoc(url(), { token_endpoint_auth_method: "private_key_jwt", jwks_uri: "https://client.example/jwks" }))).toBe("invalid_document");
    expect(await refusedFor(validDoc(url(), { jwks_uri: "https://client.example/jwks" }))).toBe("invalid_document");
    expect(await refusedFor(validDoc(url(), { jwks: { keys: [] } }))).toBe("invalid_document");
    serveJson("/d.json", validDoc(url(), { token_endpoint_auth_method: "none" }), { "Cache-Control": "no-store" });
    const metadata = await clientMetadataForEngine(url());
    expect(metadata).toMatchObject({ token_endpoint_auth_method: "none" });
    expect(metadata).not.toHaveProperty("jwks_uri");
  });

  it("needs at least one well-formed redirect URI", async () => {
    for (const redirect_uris of [
      [],
      "http://127.0.0.1/cb",
      ["javascript:alert(1)"],
      ["data:text/html,x"],
      ["http://client.example/cb"],
      ["https://client.example/cb#frag"],
      ["https://user:pw@client.example/cb"],
      ["not a url"],
      // A private-use scheme is a reverse domain name (RFC 8252 section 7.1).
      ["myapp:/callback"],
    ]) {
      expect(await refusedFor(validDoc(url(), { redirect_uris })), JSON.stringify(redirect_uris)).toBe("invalid_document");
    }
  });

  it("logo_uri, client_uri, policy_uri and tos_uri must be https:", async () => {
    for (const key of ["logo_uri", "client_uri", "policy_uri", "tos_uri"]) {
      expect(await refusedFor(validDoc(url(), { [key]: "http://client.example/x" }))).toBe("invalid_document");
      expect(await refusedFor(validDoc(url(), { [key]: "javascript:alert(1)" }))).toBe("invalid_document");
    }
    serveJson("/d.json", validDoc(url(), { logo_uri: "https://client.example/logo.png", client_uri: "https://client.example/" }), {
      "Cache-Control": "no-store",
    });
    expect(await clientMetadataForEngine(url())).toMatchObject({ logo_uri: "https://client.example/logo.png", client_uri: "https://client.example/" });
  });

  it("a client_name is 1 to 200 characters", async () => {
    expect(await refusedFor(validDoc(url(), { client_name: "" }))).toBe("invalid_document");
    expect(await refusedFor(validDoc(url(), { client_name: "n".repeat(201) }))).toBe("invalid_document");
    expect(await refusedFor(validDoc(url(), { client_name: 42 }))).toBe("invalid_document");
  });

  it("keeps only the grant types supported here, and only the code response type", async () => {
    serveJson("/d.json", validDoc(url(), { grant_types: ["authorization_code", "refresh_token", "implicit", "password"] }), {
      "Cache-Control": "no-store",
    });
    expect((await clientMetadataForEngine(url()))?.grant_types).toEqual(["authorization_code", "refresh_token"]);
    expect(await refusedFor(validDoc(url(), { grant_types: ["client_credentials"] }))).toBe("invalid_document");
    expect(await refusedFor(validDoc(url(), { response_types: ["token"] }))).toBe("invalid_document");
  });

  it("is native when every redirect URI is a loopback or private-use one, whatever application_type says", async () => {
    const cases: [string[], "web" | "native" | undefined, "web" | "native"][] = [
      [["http://127.0.0.1/callback"], undefined, "native"],
      [["http://localhost:33418/cb", "http://[::1]/cb"], undefined, "native"],
      [["com.example.app:/oauth2redirect"], undefined, "native"],
      [["https://client.example/cb"], undefined, "web"],
      [["https://client.example/cb", "http://127.0.0.1/cb"], undefined, "web"],
      [["http://127.0.0.1/cb"], "web", "native"],
      [["https://client.example/cb"], "native", "native"],
    ];
    for (const [redirect_uris, application_type, expected] of cases) {
      expect(applicationTypeOf({ redirect_uris, application_type })).toBe(expected);
    }
    serveJson("/d.json", validDoc(url(), { redirect_uris: ["http://localhost/cb", "com.example.desktop:/oauth/callback"] }), {
      "Cache-Control": "no-store",
    });
    expect((await clientMetadataForEngine(url()))?.application_type).toBe("native");
  });
});

describe("client_id URLs", () => {
  it("are https: URLs with a path, no credentials, no fragment, no dot segments, as the parser writes them", () => {
    const good = ["https://client.example/oauth/client.json", "https://client.example:8443/c", "https://client.example/c?v=1", "https://[2001:db8::1]/c"];
    for (const id of good) expect(isClientMetadataDocumentUrl(id), id).toBe(true);
    const bad = [
      "http://client.example/c",
      "https://client.example",
      "https://user:pw@client.example/c",
      "https://client.example/c#x",
      "https://client.example/a/../c",
      "https://client.example/a/./c",
      "https://client.example/a/%2e%2e/c",
      "https://Client.Example/c",
      "https://client.example/ c",
      "https://client.example\\@evil.example/c",
      "my-client",
      `https://client.example/${"a".repeat(2_100)}`,
    ];
    for (const id of bad) expect(isClientMetadataDocumentUrl(id), id).toBe(false);
  });

  it("an id that is not a document URL is left to the ordinary client table", async () => {
    expect(await clientMetadataForEngine("ab12cd34")).toBeUndefined();
    expect(resolved).toEqual([]);
  });
});

describe("addresses", () => {
  it("public unicast addresses pass", () => {
    for (const a of [PUBLIC_V4, "8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", PUBLIC_V6, "2a00:1450:4001:82b::200e"]) {
      expect(isPublicAddress(a), a).toBe(true);
    }
    expect(isPublicAddress("not-an-address")).toBe(false);
    expect(isPublicAddress("fe80::1%eth0")).toBe(false);
  });
});

describe("the cache", () => {
  it("keeps a document for its max-age within bounds; no-store and no-cache are not kept", () => {
    expect(cacheSecondsFrom(null)).toBe(300);
    expect(cacheSecondsFrom("public, max-age=60")).toBe(60);
    expect(cacheSecondsFrom("max-age=999999999")).toBe(CLIENT_METADATA_DOCUMENT_CACHE_MAX_SECONDS);
    expect(cacheSecondsFrom("max-age=0")).toBe(0);
    expect(cacheSecondsFrom("no-store")).toBe(0);
    expect(cacheSecondsFrom("max-age=600, no-cache")).toBe(0);
    expect(cacheSecondsFrom("s-maxage=120")).toBe(300); // a shared caches' directive: not ours
  });

  it("answers a second lookup from the cache, and fetches again when told not to keep it", async () => {
    const kept = docUrl("client.example", "/kept.json");
    serveJson("/kept.json", validDoc(kept), { "Cache-Control": "max-age=600" });
    await loadClientMetadataDocument(kept);
    await loadClientMetadataDocument(kept);
    expect(hits.filter((h) => h.path === "/kept.json")).toHaveLength(1);

    const fresh = docUrl("client.example", "/fresh.json");
    serveJson("/fresh.json", validDoc(fresh), { "Cache-Control": "no-store" });
    await loadClientMetadataDocument(fresh);
    await loadClientMetadataDocument(fresh);
    expect(hits.filter((h) => h.path === "/fresh.json")).toHaveLength(2);
  });

  it("does not keep a refused document", async () => {
    const url = docUrl("client.example", "/wrong.json");
    serveJson("/wrong.json", validDoc("https://elsewhere.example/wrong.json"), { "Cache-Control": "max-age=600" });
    expect(await failure(loadClientMetadataDocument(url))).toBe("client_id_mismatch");
    serveJson("/wrong.json", validDoc(url), { "Cache-Control": "max-age=600" });
    expect((await loadClientMetadataDocument(url)).client_id).toBe(url);
  });

  it("shares one fetch between concurrent lookups of one document", async () => {
    const url = docUrl("client.example", "/shared.json");
    serveJson("/shared.json", validDoc(url), { "Cache-Control": "no-store" });
    const docs = await Promise.all([1, 2, 3, 4, 5].map(() => loadClientMetadataDocument(url)));
    expect(new Set(docs).size).toBe(1);
    expect(hits).toHaveLength(1);
  });

  it("holds at most its bound, dropping the least recently used", async () => {
    routes.set("/many", () => {});
    server.removeAllListeners("request");
    const many = (path: string) => docUrl("client.example", path);
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? "/").split("?")[0]!;
      hits.push({ path, host: req.headers.host });
      res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "max-age=600" });
      res.end(JSON.stringify(validDoc(many(path))));
    });
    const first = many("/n/0");
    for (let i = 0; i < CLIENT_METADATA_DOCUMENT_CACHE_ENTRIES; i++) await loadClientMetadataDocument(many(`/n/${i}`));
    expect(clientMetadataDocumentCacheSize()).toBe(CLIENT_METADATA_DOCUMENT_CACHE_ENTRIES);
    await loadClientMetadataDocument(first); // used again: now the most recent
    await loadClientMetadataDocument(many("/n/extra"));
    expect(clientMetadataDocumentCacheSize()).toBe(CLIENT_METADATA_DOCUMENT_CACHE_ENTRIES);
    const before = hits.length;
    await loadClientMetadataDocument(first);
    expect(hits.length).toBe(before); // kept
    await loadClientMetadataDocument(many("/n/1"));
    expect(hits.length).toBe(before + 1); // the least recently used one was dropped
  });
});

describe("over https", () => {
  // A local CA and a certificate for client.example only: the fetch connects to the checked
  // address and must still present client.example (SNI) and verify the certificate for it.
  let dir: string;
  let ca: string;
  let tls: HttpsServer;
  let tlsPort: number;
  const seen: { servername: string | undefined; host: string | undefined }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "cimd-tls-"));
    const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=metadata document test CA", "-keyout", "ca.key", "-out", "ca.pem");
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=client.example", "-keyout", "leaf.key", "-out", "leaf.csr");
    writeFileSync(path.join(dir, "ext.cnf"), "subjectAltName=DNS:client.example\n");
    openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-extfile", "ext.cnf", "-out", "leaf.pem");
    ca = readFileSync(path.join(dir, "ca.pem"), "utf8");
    tls = createHttpsServer({ key: readFileSync(path.join(dir, "leaf.key")), cert: readFileSync(path.join(dir, "leaf.pem")) }, (req, res) => {
      seen.push({ servername: (req.socket as { servername?: string }).servername, host: req.headers.host });
      const id = `https://${req.headers.host}${req.url}`;
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(validDoc(id)));
    });
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    tlsPort = (tls.address() as AddressInfo).port;
  });

  afterAll(async () => {
    tls.closeAllConnections();
    await new Promise((resolve) => tls.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  function seamFor(hosts: Record<string, string>) {
    setClientMetadataDocumentTestSeam({
      ca,
      resolve: async (hostname) => (hosts[hostname] ? [{ address: hosts[hostname]!, family: 4 }] : []),
      connectTo: () => ({ address: "127.0.0.1", family: 4 }),
    });
  }

  it("connects to the checked address with the host's name for SNI, Host and the certificate", async () => {
    seamFor({ "client.example": PUBLIC_V4 });
    const url = `https://client.example:${tlsPort}/client.json`;
    expect((await loadClientMetadataDocument(url)).client_id).toBe(url);
    expect(seen.at(-1)).toEqual({ servername: "client.example", host: `client.example:${tlsPort}` });
  });

  it("refuses a certificate that is not for the host", async () => {
    seamFor({ "other.example": PUBLIC_V4 });
    expect(await failure(loadClientMetadataDocument(`https://other.example:${tlsPort}/client.json`))).toBe("network");
  });

  it("refuses the local server's own address even over https", async () => {
    seamFor({ "client.example": "127.0.0.1" });
    expect(await failure(loadClientMetadataDocument(`https://client.example:${tlsPort}/client.json`))).toBe("forbidden_address");
  });
});
