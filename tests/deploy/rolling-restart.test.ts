// A rolling restart as deploy/rolling-restart.sh does it (docs/decisions/066), under steady load
// through nginx: session reads and sign-ins from a bounded, self-stopping loop on loopback. A is
// restarted (SIGTERM: it drains, closes, exits; a new process migrates and turns ready), then,
// once nginx sends it traffic again, B. Every answer is counted: no 5xx, no reset connection, no
// lost sign-in.
import https from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployToolsMissing, httpsRequest, type Instance } from "../support/deploy";
import { CookieJar } from "../support/http";
import { postgresUnreachable } from "../support/postgres-required";
import { addUserTo, startStack, type Stack } from "./stack";

const unavailable = deployToolsMissing("deploy tests", { browser: false }) ?? (await postgresUnreachable("deploy tests"));

/** The load's bounds: it stops by itself after this many requests or this long, whichever first. */
const MAX_REQUESTS = 40_000;
const MAX_DURATION_MS = 120_000;
const READERS = 6;
const SIGNERS = 2;

type Outcome = { kind: "read" | "csrf" | "signin" | "check"; status: number | null; error: string | null; ms: number; at: number };

describe.skipIf(unavailable !== null)("rolling restart behind nginx", () => {
  let stack: Stack;
  let agent: https.Agent;

  beforeAll(async () => {
    stack = await startStack("rolling");
    agent = new https.Agent({ keepAlive: true, maxSockets: READERS + SIGNERS * 2, ca: stack.certs.ca });
  }, 120_000);

  afterAll(async () => {
    agent?.destroy();
    await stack?.stop();
  });

  it("restarting A then B under load loses no request and no sign-in", async () => {
    const email = "rolling@example.com";
    const password = "rolling restart password";
    await addUserTo(stack, { email, password });
    const outcomes: Outcome[] = [];
    let stop = false;
    const started = Date.now();
    const done = () => stop || outcomes.length >= MAX_REQUESTS || Date.now() - started > MAX_DURATION_MS;

    async function send(kind: Outcome["kind"], path: string, jar: CookieJar, init: { method?: string; form?: Record<string, string> } = {}) {
      const t = performance.now();
      const body = init.form ? new URLSearchParams(init.form).toString() : undefined;
      try {
        const res = await httpsRequest(`${stack.origin}${path}`, {
          ca: stack.certs.ca,
          agent,
          method: init.method ?? "GET",
          headers: { Cookie: jar.header(), ...(body ? { "Content-Type": "application/x-www-form-urlencoded" } : {}) },
          body,
        });
        jar.apply(res.setCookies);
        outcomes.push({ kind, status: res.status, error: null, ms: performance.now() - t, at: Date.now() });
        return res;
      } catch (error) {
        outcomes.push({ kind, status: null, error: error instanceof Error ? `${(error as NodeJS.ErrnoException).code ?? ""} ${error.message}` : String(error), ms: performance.now() - t, at: Date.now() });
        return null;
      }
    }

    /** One whole sign-in: csrf, the POST, and the new session read back. True when it worked. */
    async function signIn(): Promise<boolean> {
      const jar = new CookieJar();
      const csrf = await send("csrf", "/auth/csrf", jar);
      if (!csrf || csrf.status !== 200) return false;
      const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
      const res = await send("signin", "/auth/callback/credentials", jar, {
        method: "POST",
        form: { csrfToken, email, password, callbackUrl: `${stack.origin}/account` },
      });
      if (!res || res.status !== 302 || res.headers.location !== `${stack.origin}/account`) return false;
      const check = await send("check", "/auth/session", jar);
      return check?.status === 200 && (JSON.parse(check.body) as { user?: { email: string } } | null)?.user?.email === email;
    }

    // A first sign-in proves the path; its session is the one the readers read.
    const signIns = { tried: 0, ok: 0 };
    const readerSession = new CookieJar();
    {
      const csrf = await httpsRequest(`${stack.origin}/auth/csrf`, { ca: stack.certs.ca });
      readerSession.apply(csrf.setCookies);
      const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
      const res = await httpsRequest(`${stack.origin}/auth/callback/credentials`, {
        ca: stack.certs.ca,
        method: "POST",
        headers: { Cookie: readerSession.header(), "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrfToken, email, password }).toString(),
      });
      expect(res.status).toBe(302);
      readerSession.apply(res.setCookies);
      expect(readerSession.get("__Secure-authjs.session-token")).toBeDefined();
    }

    const readers = Array.from({ length: READERS }, async () => {
      while (!done()) {
        const res = await send("read", "/auth/session", readerSession);
        if (res && res.status === 200 && !res.body.includes(email)) {
          outcomes.push({ kind: "read", status: -1, error: `session read without the user: ${res.body.slice(0, 200)}`, ms: 0, at: Date.now() });
        }
      }
    });
    const signers = Array.from({ length: SIGNERS }, async () => {
      while (!done()) {
        signIns.tried++;
        if (await signIn()) signIns.ok++;
      }
    });

    const servedBy = (instance: Instance) => stack.nginx.accessLog().split(`up=127.0.0.1:${instance.port} us=200`).length - 1;
    const waitFor = async (what: string, ok: () => boolean | Promise<boolean>) => {
      const deadline = Date.now() + 30_000;
      while (!(await ok())) {
        if (Date.now() > deadline || done()) throw new Error(`gave up waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const ready = async (instance: Instance) => {
      try {
        return (await fetch(`${instance.url}/readyz`)).status === 200;
      } catch {
        return false;
      }
    };

    const exits: (number | null)[] = [];
    try {
      await waitFor("the load to warm up", () => outcomes.length >= 300 && servedBy(stack.a) > 0 && servedBy(stack.b) > 0);
      for (const instance of [stack.a, stack.b]) {
        exits.push(await instance.stop());
        await instance.start();
        await waitFor(`/readyz on ${instance.port}`, () => ready(instance));
        // Like deploy/rolling-restart.sh's pause, but waiting for the state: nginx sends the new
        // process requests again (its fail_timeout is over) before the next instance drains.
        const before = servedBy(instance);
        await waitFor(`nginx to send ${instance.port} traffic again`, () => servedBy(instance) > before + 20);
      }
      const after = outcomes.length;
      await waitFor("some load after both restarts", () => outcomes.length >= after + 300);
    } finally {
      stop = true;
      await Promise.all([...readers, ...signers]);
    }

    const seconds = (outcomes.at(-1)!.at - started) / 1000;
    const failures = outcomes.filter((o) => o.error !== null || o.status === null || o.status >= 500 || o.status < 0);
    const worst = Math.max(...outcomes.map((o) => o.ms));
    const sorted = outcomes.map((o) => o.ms).sort((x, y) => x - y);
    console.log(
      `rolling restart under load: ${outcomes.length} requests in ${seconds.toFixed(1)} s (${Math.round(outcomes.length / seconds)}/s), ` +
        `${signIns.ok}/${signIns.tried} sign-ins, ${failures.length} failed; latency p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, ` +
        `p99 ${sorted[Math.floor(sorted.length * 0.99)]!.toFixed(1)} ms, worst ${worst.toFixed(1)} ms; exits ${exits.join(", ")}`,
    );
    expect(failures.slice(0, 10)).toEqual([]);
    expect(exits).toEqual([0, 0]);
    expect(signIns.ok).toBe(signIns.tried);
    expect(signIns.ok).toBeGreaterThan(10);
    expect(outcomes.length).toBeLessThanOrEqual(MAX_REQUESTS + READERS + SIGNERS * 3);
    // Both drains happened: nginx saw 503s from a draining instance and sent those requests on.
    expect(stack.a.logs()).toContain("shutdown-draining");
    expect(stack.b.logs()).toContain("shutdown-draining");
  }, 180_000);
});
