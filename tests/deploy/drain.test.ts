// The drain before the listener closes (SHUTDOWN_DRAIN_MS, docs/decisions/066), on the production
// server alone: after SIGTERM, /readyz answers 503 "shutdown" and a GET 503 with Retry-After (a
// proxy retries it elsewhere and takes the instance out of rotation) while a POST is still served
// and the listener still accepts; then the listener closes and the process exits 0. A bad value
// stops the start with the variable's name.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/browser";

let app: RunningApp | undefined;
afterEach(() => app?.stop());

async function answer(url: string, init?: RequestInit): Promise<{ status: number; body: string; headers: Headers } | "refused"> {
  try {
    const res = await fetch(url, { ...init, redirect: "manual" });
    return { status: res.status, body: await res.text(), headers: res.headers };
  } catch {
    return "refused";
  }
}

describe("draining at SIGTERM (SHUTDOWN_DRAIN_MS)", () => {
  it("turns /readyz and GETs to 503 while a POST is still served, then closes and exits 0", async () => {
    app = await startApp({ SHUTDOWN_DRAIN_MS: "3000" });
    expect((await answer(`${app.url}/readyz`)) as { status: number }).toMatchObject({ status: 200 });
    const csrf = await fetch(`${app.url}/auth/csrf`);
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const cookie = csrf.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const signalled = Date.now();
    process.kill(app.pid, "SIGTERM");
    // The drain has begun once /readyz says so.
    let ready = await answer(`${app.url}/readyz`);
    while (ready !== "refused" && ready.status === 200 && Date.now() - signalled < 1_000) ready = await answer(`${app.url}/readyz`);
    expect(ready).toMatchObject({ status: 503 });
    expect(JSON.parse((ready as { body: string }).body)).toEqual({ status: "unavailable", reason: "shutdown" });

    const page = await answer(`${app.url}/auth/signin`);
    expect(page).toMatchObject({ status: 503 });
    expect((page as { headers: Headers }).headers.get("retry-after")).toBe("1");
    expect((await answer(`${app.url}/healthz`)) as { status: number }).toMatchObject({ status: 200 });
    // Sent on a new connection during the drain (the listener still accepts): served here.
    const sentAt = Date.now();
    const post = await answer(`${app.url}/auth/callback/credentials`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie },
      body: new URLSearchParams({ csrfToken, email: "nobody@example.com", password: "not-the-password" }),
    });
    expect(post).toMatchObject({ status: 302 });
    expect((post as { headers: Headers }).headers.get("location")).toContain("error=CredentialsSignin");
    expect(sentAt - signalled).toBeLessThan(3_000);

    const exit = await app.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(3_000);
    expect(app.logs()).toContain("shutdown-draining");
  }, 30_000);

  it("refuses to start with a drain not shorter than SHUTDOWN_TIMEOUT_MS, naming the variable", () => {
    const root = path.resolve(import.meta.dirname, "../..");
    const result = spawnSync(process.execPath, [path.join(root, "server/main.ts")], {
      cwd: root,
      env: { ...process.env, NODE_ENV: "production", SHUTDOWN_TIMEOUT_MS: "1000", SHUTDOWN_DRAIN_MS: "1000" },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(result.status).toBe(1);
    // A JSON line like every other (ADR 106): nothing on stderr, no stack trace.
    expect(result.stderr).toBe("");
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const failure = lines.find((line) => line.msg === "startup-failed");
    expect(failure).toMatchObject({ level: "error", message: expect.stringContaining("Invalid configuration:") });
    expect(failure!.message).toContain("SHUTDOWN_DRAIN_MS");
    expect(result.stdout).not.toMatch(/\\n\s+at /);
  });
});
