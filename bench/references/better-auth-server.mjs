// The better-auth reference of `npm run bench` (issue 23): better-auth with e-mail and password,
// its sessions in SQLite (better-sqlite3, through its built-in Kysely adapter) and its signed
// session-data cookie (`session.cookieCache`), so that GET /api/auth/get-session is answered from
// the cookie, as our jwt session is, behind better-auth's own node:http handler (better-auth/node).
// The bench signs in over HTTP and measures get-session. Started only when the package is
// installed in bench/references (scripts/bench.ts installs it there on first use). Environment: PORT, AUTH_SECRET, BENCH_EMAIL,
// BENCH_PASSWORD, BENCH_DATA_DIR.
import { createServer } from "node:http";
import path from "node:path";
import Database from "better-sqlite3";
import { betterAuth } from "better-auth";
import { toNodeHandler } from "better-auth/node";

const port = Number(process.env.PORT);
const baseURL = `http://127.0.0.1:${port}`;
const auth = betterAuth({
  secret: process.env.AUTH_SECRET,
  baseURL,
  basePath: "/api/auth",
  trustedOrigins: [baseURL],
  database: new Database(path.join(process.env.BENCH_DATA_DIR, "better-auth.sqlite")),
  emailAndPassword: { enabled: true },
  session: { cookieCache: { enabled: true, maxAge: 5 * 60 } },
  // Like the Auth.js reference: no limiter between the load generator and the endpoint.
  rateLimit: { enabled: false },
  logger: { disabled: true },
  telemetry: { enabled: false },
});

// Its tables, as its CLI's migrate would make them (the module moved between 1.x releases).
const { getMigrations } = await import("better-auth/db/migration").catch(() => import("better-auth/db"));
await (await getMigrations(auth.options)).runMigrations();
await auth.api.signUpEmail({ body: { email: process.env.BENCH_EMAIL, password: process.env.BENCH_PASSWORD, name: "Bench" } });

const server = createServer(toNodeHandler(auth));
server.keepAliveTimeout = 65_000;
server.listen(port, "127.0.0.1", () => console.log("listening on"));
