// What clientMetadataForEngine makes of a client ID metadata document is a client the provider's
// engine accepts as it is configured here: fetched from a local server (the fetcher's test seam),
// then built by the engine's own Client model. A native document (loopback redirect URIs, no
// application_type) may come back on any loopback port (RFC 8252); a web one only to its exact URI.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { clientMetadataForEngine, setClientMetadataDocumentTestSeam } from "../../../app/auth/provider/client-metadata-document.server";
import { forgetEngine, getEngine } from "../../../app/auth/provider/engine.server";
import { forgetSigningKeys } from "../../../app/auth/provider/signing-keys.server";
import { withEnv } from "../../support/auth";
import { dbLabel, resetDatabase } from "../../support/db";

const documents = new Map<string, Record<string, unknown>>();
let server: Server;
let port: number;
let undoEnv: (() => void) | null = null;

beforeAll(async () => {
  server = createServer((req, res) => {
    const doc = documents.get(req.url ?? "");
    res.writeHead(doc ? 200 : 404, { "Content-Type": "application/json" });
    res.end(JSON.stringify(doc ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(async () => {
  await resetDatabase();
  undoEnv = withEnv({ AUTH_PROVIDER: "true", AUTH_URL: "https://id.example.test" });
  forgetEngine();
  forgetSigningKeys();
  setClientMetadataDocumentTestSeam({
    allowHttp: true,
    resolve: async () => [{ address: "93.184.215.14", family: 4 }],
    connectTo: () => ({ address: "127.0.0.1", family: 4 }),
  });
});
afterEach(() => {
  setClientMetadataDocumentTestSeam(null);
  undoEnv?.();
  forgetEngine();
  forgetSigningKeys();
});

function publish(path: string, doc: (url: string) => Record<string, unknown>): string {
  const url = `http://tool.example:${port}${path}`;
  documents.set(path, doc(url));
  return url;
}

/** The members of the engine's Client model these tests read (its typings declare only find). */
type EngineClient = {
  applicationType: string;
  clientAuthMethod: string;
  jwksUri?: string;
  redirectUriAllowed(uri: string): boolean;
  grantTypeAllowed(grant: string): boolean;
};

/** The engine's own Client built from the document's metadata: its schema checks run in the constructor. */
async function engineClient(clientId: string): Promise<EngineClient> {
  const metadata = await clientMetadataForEngine(clientId);
  const { provider } = await getEngine();
  const ClientModel = provider.Client as unknown as new (metadata: object) => EngineClient;
  return new ClientModel(metadata!);
}

describe(`metadata documents as the engine's clients on ${dbLabel}`, () => {
  it("a command-line tool's document (loopback only, no application_type) is a native public client: any loopback port", async () => {
    const url = publish("/cli.json", (id) => ({ client_id: id, client_name: "Notes CLI", redirect_uris: ["http://127.0.0.1/callback"] }));
    const client = await engineClient(url);
    expect(client.applicationType).toBe("native");
    expect(client.clientAuthMethod).toBe("none");
    expect(client.redirectUriAllowed("http://127.0.0.1:53117/callback")).toBe(true);
    expect(client.redirectUriAllowed("http://127.0.0.1:53117/other")).toBe(false);
    expect(client.redirectUriAllowed("http://127.0.0.1:1@evil.example/callback")).toBe(false);
  });

  it("a web app's document gets its exact redirect URI only, and refresh tokens when it asks for them", async () => {
    const url = publish("/web.json", (id) => ({
      client_id: id,
      client_name: "Notes",
      client_uri: "https://notes.example/",
      redirect_uris: ["https://notes.example/callback"],
      grant_types: ["authorization_code", "refresh_token"],
    }));
    const client = await engineClient(url);
    expect(client.applicationType).toBe("web");
    expect(client.redirectUriAllowed("https://notes.example/callback")).toBe(true);
    expect(client.redirectUriAllowed("https://notes.example/callback/")).toBe(false);
    expect(client.grantTypeAllowed("refresh_token")).toBe(true);
  });

  it("a document asking for private_key_jwt is an unknown client: a document's client never authenticates, so it can introspect nothing but its own tokens", async () => {
    const { provider } = await getEngine();
    const find = (id: string) => (provider.Client as unknown as { find(id: string): Promise<unknown> }).find(id);
    const url = publish("/signed.json", (id) => ({ client_id: id, redirect_uris: ["https://notes.example/cb"], token_endpoint_auth_method: "private_key_jwt", jwks_uri: "https://notes.example/jwks" }));
    expect(await find(url)).toBeUndefined();
    const plain = publish("/plain.json", (id) => ({ client_id: id, redirect_uris: ["https://notes.example/cb"] }));
    expect((await engineClient(plain)).clientAuthMethod).toBe("none");
  });

  it("the engine finds a metadata-document client by its URL through its storage (the adapter), and an invalid document is an unknown client", async () => {
    const { provider } = await getEngine();
    const find = (id: string) => (provider.Client as unknown as { find(id: string): Promise<{ clientName?: string; applicationType: string } | undefined> }).find(id);
    const url = publish("/found.json", (id) => ({ client_id: id, client_name: "Desktop MCP client", redirect_uris: ["http://127.0.0.1/callback"] }));
    const found = await find(url);
    expect(found).toMatchObject({ clientName: "Desktop MCP client", applicationType: "native" });
    // client_id not the document's own URL: refused, answered as unknown (never thrown at the engine).
    const wrong = publish("/wrong.json", () => ({ client_id: "https://elsewhere.example/doc.json", redirect_uris: ["http://127.0.0.1/callback"] }));
    expect(await find(wrong)).toBeUndefined();
  });

  it("with AUTH_PROVIDER_CLIENT_METADATA_DOCUMENTS=false a document URL is an unknown client", async () => {
    const restore = withEnv({ AUTH_PROVIDER_CLIENT_METADATA_DOCUMENTS: "false" });
    try {
      forgetEngine();
      const { provider } = await getEngine();
      const url = publish("/off.json", (id) => ({ client_id: id, redirect_uris: ["http://127.0.0.1/callback"] }));
      expect(await (provider.Client as unknown as { find(id: string): Promise<unknown> }).find(url)).toBeUndefined();
    } finally {
      restore();
      forgetEngine();
    }
  });
});
