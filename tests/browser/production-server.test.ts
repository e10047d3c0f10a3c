// The production build and `npm start` as operators run them: what the server bundle imports, and
// the client address over a real socket behind a (simulated) proxy.
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { availableParallelism } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../app/auth/core/limits.server";
import { SQLITE_FILE_NAME } from "../../app/db/location.server";
import { addUser, startApp, type RunningApp } from "../support/browser";
import { ASYNC_CONTEXT_FRAME_FLAG, asyncContextFrameFlags, SINGLE_THREADED_GC_FLAG, V8_LIMITS } from "../../server/runtime-flags";
import { promotionIn } from "../../bench/gc-nvp";
import { credentialsSignIn } from "../support/app-client";
import { CookieJar } from "../support/http";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The package each bare import specifier of the server bundle names (static and dynamic imports). */
function bundleImports(): Set<string> {
  const source = readFileSync(path.join(root, "build/server/index.js"), "utf8");
  const specifiers = [
    ...source.matchAll(/^\s*import\s[^'"]*?["']([^"']+)["']/gm),
    ...source.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
    ...source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
  ].map((m) => m[1]!);
  return new Set(
    specifiers
      .filter((s) => !s.startsWith(".") && !s.startsWith("/"))
      .map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]!)),
  );
}

/** Every .ts/.tsx file below `dir`. */
function sourceFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

describe("the server build", () => {
  it("imports only production dependencies and Node's own modules, so `npm ci --omit=dev` can run it", () => {
    const imported = bundleImports();
    expect(imported.has("react-router")).toBe(true);
    // The suite's build has the example pages (VESTIBULE_EXAMPLES=1, app/routes.ts), and the session
    // example shows next-auth/react beside our own hook: next-auth is the one development package
    // it may import, and only app/routes/examples/ may import it. A production build has no examples.
    const examplesOnly = new Set(["next-auth"]);
    const missing = [...imported].filter((name) => !(name in pkg.dependencies) && !examplesOnly.has(name) && !name.startsWith("node:") && !builtinModules.includes(name));
    expect(missing).toEqual([]);
    const importers = sourceFilesUnder(path.join(root, "app")).filter((file) => /\bfrom\s+["']next-auth(?:\/|["'])/.test(readFileSync(file, "utf8")));
    expect(importers.map((file) => path.relative(root, file))).toEqual(["app/routes/examples/session.tsx"]);
  });

  it("loads the passkey, mail and common-password packages on first use, not at start (ADR 094)", () => {
    const source = readFileSync(path.join(root, "build/server/index.js"), "utf8");
    const atStart = new Set([...source.matchAll(/^\s*import\s[^'"]*?["']([^"']+)["']/gm)].map((m) => m[1]!));
    for (const lazy of ["@simplewebauthn/server", "nodemailer", "@zxcvbn-ts/language-common"]) expect(atStart, lazy).not.toContain(lazy);
    // Still there, loaded by the code that needs it.
    expect(source).toContain('import("@simplewebauthn/server")');
    expect(source).toContain('import("nodemailer")');
    expect(source).toContain('"@zxcvbn-ts/language-common"');
  });

  it("leaves the dev IdP out; oidc-provider is there only as the OAuth provider's engine (a production dependency, pinned)", () => {
    const source = readFileSync(path.join(root, "build/server/index.js"), "utf8");
    expect(source).not.toContain("startDevIdp");
    expect(source).not.toContain("Sign in to the dev IdP");
    // The engine (docs/features/provider.md) runs in production: a dependency, at one exact version.
    expect(pkg.dependencies).toHaveProperty("oidc-provider");
    expect((pkg.dependencies as Record<string, string>)["oidc-provider"]).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.devDependencies).not.toHaveProperty("oidc-provider");
  });
});

describe("the production runtime (server/)", () => {
  it("imports only production dependencies and Node's own modules, and runs with no build step of its own", () => {
    const files = readdirSync(path.join(root, "server")).filter((f) => f.endsWith(".ts"));
    expect(files).toContain("main.ts");
    const imported = new Set<string>();
    for (const file of files) {
      const source = readFileSync(path.join(root, "server", file), "utf8");
      for (const m of source.matchAll(/^import\s+(?!type\b)[^'"]*?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm)) imported.add((m[1] ?? m[2])!);
    }
    const packages = [...imported].filter((s) => !s.startsWith(".") && !s.startsWith("node:")).map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]!));
    expect(packages.filter((name) => !(name in pkg.dependencies))).toEqual([]);
    // Node runs server/*.ts by stripping the types; `exec` makes node npm's own child, so a stop
    // signal npm passes on reaches it (ADR 106).
    expect((pkg as unknown as { scripts: Record<string, string> }).scripts.start).toBe("exec node server/main.ts");
  });

  const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");

  const limits = Object.entries(V8_LIMITS).map(([name, value]) => `${name}=${value}`);

  it("started as `node server/main.ts` with no flags, the server runs with its memory limits and runtime flags (same pid)", async () => {
    const app = await startApp();
    try {
      expect(cmdline(app.pid)).toEqual(expect.arrayContaining([...limits, ...asyncContextFrameFlags()]));
      // Free to use more CPUs, it leaves V8 its helper threads.
      if (availableParallelism() > 1) expect(cmdline(app.pid)).not.toContain(SINGLE_THREADED_GC_FLAG);
      expect(environ(app.pid)).toContain("MALLOC_MMAP_THRESHOLD_=131072");
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    } finally {
      await app.stop();
    }
  });

  it("started on one CPU (taskset), the server also keeps every collection on its main thread (docs/decisions/101)", async () => {
    const app = await startApp({}, [], ["taskset", "-c", "0"]);
    try {
      expect(cmdline(app.pid)).toContain(SINGLE_THREADED_GC_FLAG);
      expect(cmdline(app.pid)).toEqual(expect.arrayContaining(limits));
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    } finally {
      await app.stop();
    }
  });

  it("an operator's --no-experimental-async-context-frame is kept: the flag is not added", async () => {
    const app = await startApp({ NODE_OPTIONS: "--no-experimental-async-context-frame" });
    try {
      expect(cmdline(app.pid)).not.toContain(ASYNC_CONTEXT_FRAME_FLAG);
      expect(cmdline(app.pid)).toEqual(expect.arrayContaining(limits));
    } finally {
      await app.stop();
    }
  });

  it("a limit the operator sets (NODE_OPTIONS, the variable) is kept, the others are added", async () => {
    const app = await startApp({ NODE_OPTIONS: "--max-old-space-size=200", MALLOC_MMAP_THRESHOLD_: "262144" });
    try {
      const args = cmdline(app.pid);
      expect(args).toContain(`--max-semi-space-size=${V8_LIMITS["--max-semi-space-size"]}`);
      expect(args.some((a) => a.startsWith("--max-old-space-size"))).toBe(false);
      expect(environ(app.pid)).toContain("MALLOC_MMAP_THRESHOLD_=262144");
    } finally {
      await app.stop();
    }
  });
});

describe("a request's objects die young (docs/decisions/096)", () => {
  // What a request builds should be gone by the next young collection or the one after. Held from
  // the old generation — a WeakMap keyed by the request, a getter literal's hidden class in a
  // transition tree — it was promoted instead, 5–6.5 KB a request, and the Mark-Compacts that then
  // ran several times a second were the 10 ms pauses at p99. V8's own count (--trace-gc-nvp,
  // promoted= per young collection) under 16 concurrent keep-alive clients; a few bytes a request now
  // (most of the ~60 B measured before ADR 100 were Node's GC observer's, which the metrics no longer use).
  const CLIENTS = 16;
  const PER_CLIENT = 120;

  async function load(url: string, cookie: string | undefined, perClient: number) {
    const headers = cookie ? { Cookie: cookie } : undefined;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = 0; i < perClient; i++) {
          const res = await fetch(url, { headers });
          expect(res.status).toBe(200);
          await res.arrayBuffer();
        }
      }),
    );
  }

  it("GET /auth/session, /auth/csrf and /auth/providers move under 1 KiB a request to the old generation", async () => {
    const app = await startApp({}, ["--trace-gc-nvp"]);
    try {
      const PASSWORD = "promotion-test-password-1";
      addUser(app, { email: "ada@example.com", password: PASSWORD });
      const { jar } = await credentialsSignIn(app, "ada@example.com", PASSWORD);
      expect(jar.get("authjs.session-token")).toBeTruthy();
      const promoted: Record<string, number> = {};
      const youngCollections: Record<string, number> = {};
      for (const endpoint of ["/auth/session", "/auth/csrf", "/auth/providers"]) {
        const url = `${app.url}${endpoint}`;
        const cookie = endpoint === "/auth/providers" ? undefined : jar.header();
        // A warm-up first: the optimising compiler settles, the young generation reaches its size.
        await load(url, cookie, PER_CLIENT / 2);
        const from = app.logs().length;
        await load(url, cookie, PER_CLIENT);
        const trace = promotionIn(app.logs().slice(from));
        promoted[endpoint] = Math.round(trace.promotedBytes / (CLIENTS * PER_CLIENT));
        youngCollections[endpoint] = trace.youngCollections;
      }
      // V8's trace reached us for every endpoint (a figure of 0 from no trace at all would pass the next check)…
      expect(Object.values(youngCollections).filter((count) => count === 0)).toEqual([]);
      // …and no endpoint moves 1 KiB or more a request to the old generation.
      expect(Object.entries(promoted).filter(([, bytes]) => bytes >= 1024)).toEqual([]);
    } finally {
      await app.stop();
    }
  });
});

describe("the client address on a real socket (AUTH_TRUSTED_PROXIES=127.0.0.1, dual-stack listener)", () => {
  let app: RunningApp;
  let base: string;
  const PASSWORD = "proxy-test-password-1";

  beforeAll(async () => {
    // Listening on "::", an IPv4 peer is reported as ::ffff:127.0.0.1; the rule must still see 127.0.0.1.
    app = await startApp({ HOST: "::", AUTH_TRUSTED_PROXIES: "127.0.0.1" });
    base = app.url.replace("localhost", "127.0.0.1");
    addUser(app, { email: "ada@example.com", password: PASSWORD });
  });
  afterAll(() => app?.stop());

  async function attempt(email: string, password: string, headers: Record<string, string>) {
    const jar = new CookieJar();
    const csrf = await fetch(`${base}/auth/csrf`);
    jar.apply(csrf);
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const res = await fetch(`${base}/auth/callback/credentials`, {
      method: "POST",
      redirect: "manual",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: jar.header(), ...headers },
      body: new URLSearchParams({ csrfToken, email, password }),
    });
    jar.apply(res);
    return { res, signedIn: Boolean(jar.get("authjs.session-token")) };
  }

  function eventAddresses(type: string): string[] {
    const file = new Database(path.join(app.dataDir, SQLITE_FILE_NAME), { readonly: true });
    try {
      return (file.prepare("SELECT ip FROM AuthEvent WHERE type = ? ORDER BY at").all(type) as { ip: string | null }[]).map((r) => r.ip!);
    } finally {
      file.close();
    }
  }

  it("two clients behind the proxy have their own budgets; the peer's own requests are 127.0.0.1", async () => {
    // The proxy's own request, with a forged stamp that the server overwrites.
    const direct = await attempt("nobody@example.com", "guess", { "X-Vestibule-Remote-Addr": "6.6.6.6" });
    expect(direct.res.status).toBe(302);
    expect(eventAddresses("signin-failed")).toEqual(["127.0.0.1"]);

    // The client behind the proxy spends its whole budget of failures on other accounts (the
    // leftmost, client-written entries vary and must not matter)…
    for (let i = 0; i < DEFAULT_LIMITS.CREDENTIALS_CLIENT.count; i++) {
      const failed = await attempt(`someone-${i}@example.com`, "guess", { "X-Forwarded-For": `198.51.100.${i % 250}, 203.0.113.1` });
      expect(new URL(failed.res.headers.get("Location")!).searchParams.get("error")).toBe("CredentialsSignin");
    }
    // …so even the right password from it is refused before it is checked…
    const a = await attempt("ada@example.com", PASSWORD, { "X-Forwarded-For": "2001:db8::b, 203.0.113.1" });
    expect(a.signedIn).toBe(false);
    expect(new URL(a.res.headers.get("Location")!).searchParams.get("error")).toBe("RateLimited");
    expect(Number(a.res.headers.get("Retry-After"))).toBeGreaterThan(0);
    // …while another client behind the same proxy has a budget of its own.
    const b = await attempt("ada@example.com", PASSWORD, { "X-Forwarded-For": "6.6.6.6, [2001:DB8::B]:4711" });
    expect(b.signedIn).toBe(true);

    expect(new Set(eventAddresses("rate-limited"))).toEqual(new Set(["203.0.113.1"]));
    expect(eventAddresses("signin")).toEqual(["2001:db8::b"]);
  });
});

describe("the site icon (public/)", () => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.stop());

  it("a browser asking for /favicon.ico gets the icon, not the 404 page, cached for a week", async () => {
    const res = await fetch(`${app.url}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/x-icon");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=604800");
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    const bytes = Buffer.from(await res.arrayBuffer());
    // An ICO directory of one image, and that image a PNG.
    expect([...bytes.subarray(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]);
    expect(bytes.subarray(22, 26).toString("latin1")).toBe("\x89PNG");
    expect(app.logs()).not.toMatch(/No route matches/);
  });

  it("the SVG icon is served as image/svg+xml with the same caching, and a revalidation is a 304", async () => {
    const res = await fetch(`${app.url}/favicon.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/svg+xml");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=604800");
    expect(await res.text()).toMatch(/^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    const again = await fetch(`${app.url}/favicon.svg`, { headers: { "If-None-Match": res.headers.get("ETag")! } });
    expect(again.status).toBe(304);
  });

  it("every page links both icons", async () => {
    const html = await (await fetch(`${app.url}/`)).text();
    const icons = [...html.matchAll(/<link\b[^>]*>/g)].map((m) => m[0]).filter((tag) => /\brel="icon"/.test(tag));
    expect(icons.some((tag) => /\bhref="\/favicon\.ico"/.test(tag))).toBe(true);
    expect(icons.some((tag) => /\bhref="\/favicon\.svg"/.test(tag) && /\btype="image\/svg\+xml"/.test(tag))).toBe(true);
  });
});
