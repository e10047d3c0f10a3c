// Client ID metadata documents through the running provider (the fetcher's test seam points every
// document host at a local server), on both databases: the consent page says where the answer
// goes when that is not the document's host, and document fetches are limited per client address
// (OAUTH_CLIENT_DOCUMENT_CLIENT): past it the client is unknown — the error page, no redirect.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { setClientMetadataDocumentTestSeam } from "../../../app/auth/provider/client-metadata-document.server";
import { createUser, PASSWORD } from "../../support/auth";
import { dbLabel, resetDatabase } from "../../support/db";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { authorizationUrl, discover, follow, signedInBrowser, type TestClient } from "../../support/provider-flow";

const documents = new Map<string, Record<string, unknown>>();
const fetched: string[] = [];
let docs: Server;
let docPort: number;
let server: ProviderServer;

beforeAll(async () => {
  docs = createServer((req, res) => {
    fetched.push(req.url ?? "");
    const doc = documents.get(req.url ?? "");
    res.writeHead(doc ? 200 : 404, { "Content-Type": "application/json" });
    res.end(JSON.stringify(doc ?? {}));
  });
  await new Promise<void>((resolve) => docs.listen(0, "127.0.0.1", resolve));
  docPort = (docs.address() as AddressInfo).port;
  server = await startProviderServer({ AUTH_RATE_LIMIT_OAUTH_CLIENT_DOCUMENT_CLIENT: "2/900" });
});
afterAll(async () => {
  setClientMetadataDocumentTestSeam(null);
  await server.stop();
  docs.closeAllConnections();
  await new Promise((resolve) => docs.close(resolve));
});
beforeEach(async () => {
  await resetDatabase();
  await createUser("ada@example.com", "Ada");
  fetched.length = 0;
  // Also empties the document cache.
  setClientMetadataDocumentTestSeam({
    allowHttp: true,
    resolve: async () => [{ address: "93.184.215.14", family: 4 }],
    connectTo: () => ({ address: "127.0.0.1", family: 4 }),
  });
});

function publish(path: string, redirectUri: string): TestClient {
  const clientId = `http://tool.example:${docPort}${path}`;
  documents.set(path, { client_id: clientId, client_name: "Tool", redirect_uris: [redirectUri] });
  return { client: { client_id: clientId, token_endpoint_auth_method: "none" }, auth: oauth.None(), secret: null, redirectUri };
}

describe(`metadata documents served to the provider on ${dbLabel}`, () => {
  it("the consent page names the host the answer goes to when it is not the document's", async () => {
    const as = await discover(server);
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const elsewhere = await follow(server, jar, (await authorizationUrl(as, publish("/elsewhere.json", "https://collector.example/cb"))).url);
    expect(elsewhere.url.pathname).toMatch(/^\/oauth\/consent\//);
    expect(elsewhere.html).toContain(`tool.example:${docPort}`);
    expect(elsewhere.html).toMatch(/id="consent-redirect-host"[^]*collector\.example/);
    expect(elsewhere.html).toContain('id="consent-unverified"');
    const same = await follow(server, jar, (await authorizationUrl(as, publish("/same.json", `https://tool.example:${docPort}/cb`))).url);
    expect(same.url.pathname).toMatch(/^\/oauth\/consent\//);
    expect(same.html).not.toContain('id="consent-redirect-host"');
  });

  it("fetches are limited per client address: past OAUTH_CLIENT_DOCUMENT_CLIENT the client is unknown, with no fetch and no redirect", async () => {
    const as = await discover(server);
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    for (const path of ["/a.json", "/b.json"]) {
      const step = await follow(server, jar, (await authorizationUrl(as, publish(path, "https://tool.example/cb"))).url);
      expect(step.url.pathname).toMatch(/^\/oauth\/consent\//);
    }
    const refused = await follow(server, jar, (await authorizationUrl(as, publish("/c.json", "https://tool.example/cb"))).url);
    expect(refused.status).toBe(400);
    expect(refused.url.origin).toBe(server.url);
    expect(fetched).toEqual(["/a.json", "/b.json"]);
  });
});
