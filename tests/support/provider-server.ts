// The app with its OAuth provider on a real socket, in this process: what server/main.ts does for
// the provider — the engine's paths answered by the engine, every other request by React Router's
// handler (appHandler) — so a real OAuth client (oauth4webapi) can drive it over HTTP. AUTH_URL is
// this server's own origin, set once the port is known.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { forgetEngine, handleEngineRequest, isEnginePath } from "../../app/auth/provider/engine.server.ts";
import { forgetSigningKeys } from "../../app/auth/provider/signing-keys.server.ts";
import { appHandler } from "./app-handler.ts";
import { withEnv } from "./auth.ts";

export type ProviderServer = { url: string; stop: () => Promise<void> };

async function toFetchRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (typeof value === "string") headers.set(name, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(new URL(req.url ?? "/", origin), {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
    duplex: "half",
  } as RequestInit);
}

async function writeResponse(res: ServerResponse, response: Response) {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** Starts the server with `env` (AUTH_PROVIDER=true is implied); stop() puts the environment back. */
export async function startProviderServer(env: Record<string, string | undefined> = {}): Promise<ProviderServer> {
  const handle = await appHandler();
  let origin = "";
  const server: Server = createServer((req, res) => {
    req.headers["x-vestibule-remote-addr"] = req.socket.remoteAddress ?? "";
    const path = (req.url ?? "/").split("?", 1)[0]!;
    if (isEnginePath(path)) return void handleEngineRequest(req, res);
    void toFetchRequest(req, origin)
      .then(handle)
      .then((response) => writeResponse(res, response))
      .catch((error: unknown) => {
        res.writeHead(500, { "Content-Type": "text/plain" });
        res.end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const undo = withEnv({ AUTH_PROVIDER: "true", AUTH_URL: origin, ...env });
  forgetEngine();
  forgetSigningKeys();
  return {
    url: origin,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      undo();
      forgetEngine();
      forgetSigningKeys();
    },
  };
}
