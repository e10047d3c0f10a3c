// Under `npm run dev` no production server stands in front of the app: the peer address the app
// believes (X-Vestibule-Remote-Addr) must still be the socket's, never a copy the client sent.
// The dev plugin's own middleware is taken from the plugin as Vite would install it, and run in a
// real HTTP server in front of the same request conversion React Router's dev server uses.
import { once } from "node:events";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequest } from "@remix-run/node-fetch-server";
import type { ViteDevServer } from "vite";
import { afterEach, describe, expect, it } from "vitest";
import { clientAddress } from "../../../app/auth/core/request.server";
import { devBootstrap } from "../../../scripts/dev-bootstrap";
import { requestFor } from "../support";

type Middleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** The middlewares the dev plugin installs before its bootstrap (which needs a real Vite server). */
async function devMiddlewares(): Promise<Middleware[]> {
  const installed: Middleware[] = [];
  const server = {
    middlewares: { use: (fn: Middleware) => installed.push(fn) },
    ssrLoadModule: () => Promise.reject(new Error("no Vite here")),
    config: { logger: { info() {}, error() {} } },
  } as unknown as ViteDevServer;
  const hook = devBootstrap().configureServer as (server: ViteDevServer) => Promise<unknown>;
  await hook(server).catch(() => undefined);
  return installed;
}

let close: (() => void) | null = null;
afterEach(() => {
  close?.();
  close = null;
});

/** A dev-like server: the plugin's middlewares, then the address the app would compute. */
async function devServer(): Promise<number> {
  const middlewares = await devMiddlewares();
  const server = createServer((req, res) => {
    let i = 0;
    const next = () => {
      const fn = middlewares[i++];
      if (fn) return fn(req, res, next);
      const request = createRequest(req, res);
      const address = clientAddress(requestFor(request.url, { headers: request.headers }));
      res.end(JSON.stringify({ address }));
    };
    next();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  close = () => server.close();
  return (server.address() as AddressInfo).port;
}

function get(port: number, headers: Record<string, string>): Promise<{ address: string | null }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path: "/auth/session", headers }, (res) => {
      let body = "";
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve(JSON.parse(body)));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("npm run dev: the client address", () => {
  it("a client sending X-Vestibule-Remote-Addr itself is still counted at its socket's address", async () => {
    const port = await devServer();
    expect(await get(port, { "X-Vestibule-Remote-Addr": "6.6.6.6" })).toEqual({ address: "127.0.0.1" });
    expect(await get(port, { "x-vestibule-remote-addr": "203.0.113.9, 6.6.6.6" })).toEqual({ address: "127.0.0.1" });
  });

  it("a client sending nothing is counted at its socket's address", async () => {
    const port = await devServer();
    expect(await get(port, {})).toEqual({ address: "127.0.0.1" });
  });
});
