// Serves the trivial app's production build as server/main.ts serves Vestibule's: node:http,
// sirv for the built assets first, then React Router's request listener.
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

process.env.NODE_ENV ??= "production";
const { createRequestListener } = await import("@react-router/node");
const { default: sirv } = await import("sirv");
const here = path.dirname(fileURLToPath(import.meta.url));
const build = await import(path.join(here, "build/server/index.js"));
const assets = sirv(path.join(here, "build/client"), { etag: true });
const handle = createRequestListener({ build, mode: process.env.NODE_ENV });
const server = createServer((req, res) => {
  if (req.method === "GET" || req.method === "HEAD") assets(req, res, () => handle(req, res));
  else handle(req, res);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening on"));
