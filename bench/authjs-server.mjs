// The Auth.js reference of `npm run bench` (contract §9): @auth/core with a credentials provider
// and JWT sessions under /auth, behind the least node:http glue that turns a request into a
// web Request and writes the Response back. The password check uses the same Argon2id parameters
// as Vestibule's (app/auth/credentials/password.server.ts), so a sign-in costs both the same hash.
// Environment: PORT, AUTH_SECRET, BENCH_EMAIL, BENCH_PASSWORD.
import { createServer } from "node:http";
import { hash, verify } from "@node-rs/argon2";
import { Auth } from "@auth/core";
import Credentials from "@auth/core/providers/credentials";

const ARGON2 = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };
const email = process.env.BENCH_EMAIL;
const passwordHash = await hash(process.env.BENCH_PASSWORD, ARGON2);

const config = {
  secret: process.env.AUTH_SECRET,
  trustHost: true,
  basePath: "/auth",
  session: { strategy: "jwt" },
  logger: { error() {}, warn() {}, debug() {} },
  providers: [
    Credentials({
      credentials: { email: {}, password: {} },
      async authorize(credentials) {
        const ok = credentials.email === email && (await verify(passwordHash, String(credentials.password ?? "")));
        return ok ? { id: "bench-user", name: "Bench", email } : null;
      },
    }),
  ],
};

async function toRequest(req) {
  const url = `http://${req.headers.host}${req.url}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  if (req.method === "GET" || req.method === "HEAD") return new Request(url, { method: req.method, headers });
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new Request(url, { method: req.method, headers, body: Buffer.concat(chunks) });
}

const server = createServer(async (req, res) => {
  try {
    const response = await Auth(await toRequest(req), config);
    const headers = {};
    for (const [name, value] of response.headers) {
      if (name === "set-cookie") continue;
      headers[name] = value;
    }
    const cookies = response.headers.getSetCookie();
    if (cookies.length) headers["set-cookie"] = cookies;
    res.writeHead(response.status, headers);
    res.end(response.body ? Buffer.from(await response.arrayBuffer()) : undefined);
  } catch {
    res.writeHead(500);
    res.end();
  }
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening on"));
