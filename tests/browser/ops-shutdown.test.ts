// SIGTERM/SIGINT on the production server: stop accepting connections, let the
// requests in flight finish within SHUTDOWN_TIMEOUT_MS, close idle keep-alive connections and the
// database, exit. The request in flight is a real one: a sign-in POST whose body is still arriving.
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/browser";
import { openSocket, parseResponse, readAll } from "../support/raw-http";
import { received, refused, slowSignIn } from "../support/stop-signal";
import { waitUntil } from "../support/wait";

const portOf = (app: RunningApp) => Number(new URL(app.url).port);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long the server is shown holding a request whose body has not all arrived: a check, not a wait. */
const HELD_MS = 500;

let app: RunningApp | undefined;
afterEach(() => app?.stop());

describe("graceful shutdown", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "%s: the request in flight completes with 200, new connections are refused, idle keep-alive connections close, exit 0",
    async (signal) => {
      app = await startApp();
      // An idle keep-alive connection (server keepAliveTimeout 65 s) must not hold the exit up.
      const idle: Socket = await openSocket(portOf(app));
      const idleClosed = readAll(idle);
      const idleAnswered = received(idle, "\r\n\r\n");
      idle.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
      await idleAnswered;

      const slow = await slowSignIn(portOf(app), new URL(app.url).host);
      const signalled = Date.now();
      process.kill(app.pid, signal);
      // The listener closes soon after the signal: asked until new connections are refused.
      expect(await waitUntil(() => refused(portOf(app!)), Boolean)).toBe(true);
      // The idle connection was closed by the server, after answering its one request.
      expect(parseResponse(await idleClosed).status).toBe(200);

      await sleep(HELD_MS);
      // Still waiting for the request, however long the body takes (within the deadline).
      expect(await Promise.race([app.exited.then(() => "exited"), sleep(0).then(() => "running")])).toBe("running");
      const res = await slow.finish();
      const answered = Date.now();
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ url: expect.stringContaining("/auth/signin?error=CredentialsSignin") });
      expect(res.headers.connection).toBe("close");

      const exit = await app.exited;
      const exitedAt = Date.now();
      expect(exit).toEqual({ code: 0, signal: null });
      expect(exitedAt - answered).toBeLessThan(1_000);
      console.log(`[shutdown] ${signal}: request finished ${answered - signalled} ms after the signal, exit ${exitedAt - answered} ms after it`);
      const logs = app.logs();
      expect(logs).toContain('"event":"shutdown-started"');
      expect(logs).toContain('"event":"shutdown-complete"');
      expect(logs).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
    },
  );

  // The forced close at the deadline is the configured, expected end of a stop, not
  // a failure: the pool is closed and the exit is 0, as when the drain finishes in time.
  it("a request that never completes is cut off at SHUTDOWN_TIMEOUT_MS, the database is closed and the process exits 0", async () => {
    app = await startApp({ SHUTDOWN_TIMEOUT_MS: "1000" });
    const slow = await slowSignIn(portOf(app), new URL(app.url).host);
    const signalled = Date.now();
    process.kill(app.pid, "SIGTERM");
    const exit = await app.exited;
    const took = Date.now() - signalled;
    console.log(`[shutdown] deadline 1000 ms: exited after ${took} ms`);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(took).toBeGreaterThanOrEqual(1_000);
    expect(took).toBeLessThan(2_000);
    // The client sees its connection closed without an answer, not a hang.
    expect(await slow.answer).toBe("");
    const logs = app.logs();
    expect(logs).toContain('"event":"shutdown-timed-out"');
    expect(logs.indexOf('"event":"shutdown-complete"')).toBeGreaterThan(logs.indexOf('"event":"shutdown-timed-out"'));
  });

  it.each(["abc", "-1", "1.5", "600001", "10s"])("SHUTDOWN_TIMEOUT_MS=%j stops the start with the variable's name", async (value) => {
    const failed = await startApp({ SHUTDOWN_TIMEOUT_MS: value }).then(
      (running) => {
        app = running;
        return "";
      },
      (e: Error) => e.message,
    );
    expect(failed).toMatch(/^server exited with 1:/);
    expect(failed).toContain("SHUTDOWN_TIMEOUT_MS");
    expect(failed).not.toMatch(/\n\s+at /);
  });
});
