// Structured logs of the production server (docs/decisions/050): one JSON object per
// line with time, level, msg and the request's id; X-Request-Id taken when well-formed and echoed;
// LOG_REQUESTS' access line; LOG_LEVEL; and no secret of a full flow — passwords, cookies, CSRF
// tokens, e-mailed links and their tokens, OAuth codes and state — on any line, at debug level.
import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, credentialsSignIn, csrfToken, oauthSignIn, requestEmailLink, sessionEmail } from "../support/app-client";
import { freePort, startApp, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { CookieJar } from "../support/http";
import { ALICE, startTestIdp, TEST_CLIENT, type TestIdp } from "../support/idp";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";
import { waitUntil } from "../support/wait";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

type Line = { time: string; level: string; msg: string; reqId?: string; event?: string; [k: string]: unknown };

function lines(app: RunningApp): Line[] {
  return app
    .logs()
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      try {
        return JSON.parse(l) as Line;
      } catch {
        throw new Error(`a log line that is not JSON: ${l}`);
      }
    });
}

/** Waits until `app` has logged a whole line that `match` accepts (lines are written as they happen). */
function untilLine(app: RunningApp, match: (line: Line) => boolean): Promise<void> {
  return app.untilLogged((output) =>
    output
      .split("\n")
      .slice(0, -1)
      .some((l) => {
        try {
          return match(JSON.parse(l) as Line);
        } catch {
          return false;
        }
      }),
  );
}

let idp: TestIdp;
let sink: SmtpSink;
let app: RunningApp;

beforeAll(async () => {
  [idp, sink] = await Promise.all([startTestIdp(), startSmtpSink()]);
  app = await startApp({
    LOG_LEVEL: "debug",
    LOG_REQUESTS: "true",
    AUTH_OIDC_ISSUER: idp.issuer,
    AUTH_OIDC_ID: TEST_CLIENT.clientId,
    AUTH_OIDC_SECRET: TEST_CLIENT.clientSecret,
    AUTH_EMAIL_SERVER: sink.url,
    AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>",
  });
});

afterAll(async () => {
  await app?.stop();
  await idp?.stop();
  await sink?.close();
});

describe("logs of the production server", () => {
  it("every line is one JSON object with time, level and msg; the start itself is logged that way", () => {
    const all = lines(app);
    expect(all.length).toBeGreaterThan(0);
    for (const line of all) {
      expect(Date.parse(line.time)).not.toBeNaN();
      expect(["trace", "debug", "info", "warn", "error", "fatal"]).toContain(line.level);
      expect(typeof line.msg).toBe("string");
    }
    expect(all.some((l) => l.msg === "server-listening")).toBe(true);
  });

  it("a well-formed X-Request-Id is kept and echoed; a malformed one or none gets a new id; the access line carries it", async () => {
    const jar = new CookieJar();
    const kept = await call(app, jar, "/auth/providers", { headers: { "X-Request-Id": "lb-1f3a:7.trace_id-ABC" } });
    await kept.body?.cancel();
    expect(kept.headers.get("X-Request-Id")).toBe("lb-1f3a:7.trace_id-ABC");

    for (const bad of ["has space", "x".repeat(129), "semi;colon", "%C3%BC", "a\"b", ""]) {
      const res = await fetch(`${app.url}/healthz`, { headers: { "X-Request-Id": bad } });
      await res.body?.cancel();
      const echoed = res.headers.get("X-Request-Id")!;
      expect(echoed).not.toBe(bad);
      expect(echoed).toMatch(/^[0-9a-f-]{36}$/);
    }
    const none = await fetch(`${app.url}/auth/csrf`);
    await none.body?.cancel();
    const generated = none.headers.get("X-Request-Id")!;
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);

    // An access line is written once its answer has gone out: wait for the two this test reads.
    await untilLine(app, (l) => l.msg === "request" && l.reqId === "lb-1f3a:7.trace_id-ABC");
    await untilLine(app, (l) => l.msg === "request" && l.reqId === generated);
    const access = lines(app).filter((l) => l.msg === "request");
    expect(access.find((l) => l.reqId === "lb-1f3a:7.trace_id-ABC")).toMatchObject({ method: "GET", path: "/auth/providers", status: 200 });
    expect(access.find((l) => l.reqId === generated)).toMatchObject({ method: "GET", path: "/auth/csrf", status: 200 });
    expect(typeof access[0]!.durationMs).toBe("number");
  });

  it("an event logged while serving a request carries that request's id (a refused sign-in)", async () => {
    const jar = new CookieJar();
    const token = await csrfToken(app, jar);
    const res = await call(app, jar, "/auth/callback/credentials", {
      body: { csrfToken: token, email: "nobody@example.com", password: "wrong-password-for-nobody" },
      headers: { "X-Request-Id": "refused-signin-1" },
    });
    await res.body?.cancel();
    await untilLine(app, (l) => l.msg === "request" && l.reqId === "refused-signin-1");
    const ofRequest = lines(app).filter((l) => l.reqId === "refused-signin-1");
    expect(ofRequest.map((l) => l.msg)).toEqual(expect.arrayContaining(["auth-failure", "request"]));
    expect(ofRequest.find((l) => l.msg === "auth-failure")).toMatchObject({ level: "warn", code: "CredentialsSignin" });
  });

  it("no secret of a credentials, e-mail link and OAuth sign-in, nor of a hostile client log, reaches any line", async () => {
    const secrets: string[] = [];
    const keep = (value: string | null | undefined) => {
      if (value) secrets.push(value);
    };

    // Credentials: the owner signs in, fails once, signs in again.
    const email = "logs-owner@example.com";
    const password = "owner-password-Zq81!x";
    await seedUser(app, { email, password });
    keep(password);
    const wrong = "owner-wrong-Qp07?y";
    keep(wrong);
    const failed = await credentialsSignIn(app, email, wrong);
    keep(failed.csrfToken);
    const signedIn = await credentialsSignIn(app, email, password);
    expect(signedIn.res.headers.get("Location")).toBe(`${app.url}/account`);
    keep(signedIn.csrfToken);
    for (const name of signedIn.jar.names()) keep(signedIn.jar.get(name));
    expect(await sessionEmail(app, signedIn.jar)).toBe(email);

    // E-mail link: requested, then opened.
    const mailed = await requestEmailLink(app, sink, "logs-link@example.com", 1);
    keep(mailed.link.href);
    keep(mailed.link.searchParams.get("token"));
    keep(mailed.csrfToken);
    const opened = await call(app, mailed.jar, mailed.link.pathname + mailed.link.search);
    await opened.body?.cancel();
    expect(opened.status).toBe(302);
    expect(await sessionEmail(app, mailed.jar)).toBe("logs-link@example.com");
    for (const name of mailed.jar.names()) keep(mailed.jar.get(name));

    // OAuth against the test IdP.
    const oauth = await oauthSignIn(app, ALICE);
    expect(await sessionEmail(app, oauth.jar)).toBe(ALICE.email);
    const callback = new URL(oauth.callbackUrl);
    keep(callback.searchParams.get("code"));
    keep(callback.searchParams.get("state"));
    keep(new URL(oauth.authorizationUrl).searchParams.get("code_challenge"));
    keep(ALICE.password);
    for (const name of oauth.jar.names()) keep(oauth.jar.get(name));

    // A replayed OAuth callback (logged as a failure, with its cause) and a replayed link.
    const replay = await call(app, new CookieJar(), callback.pathname + callback.search);
    await replay.body?.cancel();
    const again = await call(app, new CookieJar(), mailed.link.pathname + mailed.link.search);
    await again.body?.cancel();

    // A client that puts secrets in what it asks the server to log, and in headers.
    const jar = new CookieJar();
    const logToken = await csrfToken(app, jar);
    const hostile = "hostile-secret-9Kd2Lw";
    keep(hostile);
    const logged = await call(app, jar, "/auth/_log", {
      body: {
        csrfToken: logToken,
        level: "error",
        code: `x${hostile}`,
        message: `failed at ${app.url}/auth/callback/email?token=${hostile}a&email=a%40b.c`,
        metadata: JSON.stringify({ password: `${hostile}b`, nested: { token: `${hostile}c`, url: `https://x.test/cb?code=${hostile}d&state=${hostile}e` } }),
      },
      headers: { Authorization: `Bearer ${hostile}f` },
    });
    await logged.body?.cancel();
    expect(logged.status).toBe(200);

    // The last request's access line is the last line of the flow: everything before it is written.
    await untilLine(app, (l) => l.msg === "request" && l.reqId === logged.headers.get("X-Request-Id"));
    const output = app.logs();
    expect(secrets.length).toBeGreaterThan(12);
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(7);
      expect(output, `a secret reached the log: ${secret.slice(0, 12)}…`).not.toContain(secret);
    }
    // The hostile line is there, with what is no secret.
    const clientLine = lines(app).find((l) => l.msg === "client-log");
    expect(clientLine).toBeDefined();
    expect(JSON.stringify(clientLine)).toContain("[redacted]");
    expect(JSON.stringify(clientLine)).toContain("email=a%40b.c");
  });
});

describe("LOG_LEVEL", () => {
  it("a bad value stops the start naming the variable", async () => {
    // Asynchronously, with no time limit of its own: a loaded machine may take a while to start Node.
    const child = spawn(process.execPath, [path.join(root, "server/main.ts")], {
      cwd: root,
      env: { ...app.env, PORT: "0", LOG_LEVEL: "verbose" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const [code] = (await once(child, "close")) as [number | null];
    expect(code).toBe(1);
    expect(output).toContain("LOG_LEVEL must be one of");
    expect(output).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
  });

  it("LOG_LEVEL=warn leaves out info lines (no access lines even with LOG_REQUESTS=true) and keeps warnings", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(root, "server/main.ts")], {
      cwd: root,
      env: { ...app.env, PORT: String(port), LOG_LEVEL: "warn", LOG_REQUESTS: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    try {
      // Nothing announces the start at this level: ask until it answers (or the process ends).
      const ended = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`exited with ${code}: ${output}`))));
      const answered = waitUntil(() => fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null), (res) => res?.ok === true, { everyMs: 100 });
      await (await Promise.race([answered, ended]))!.body?.cancel();
      const jar = new CookieJar();
      const token = ((await (await call(`http://127.0.0.1:${port}`, jar, "/auth/csrf")).json()) as { csrfToken: string }).csrfToken;
      // Two refused sign-ins: the second one's warning is logged after anything the first one
      // logs (one process, one stream), so once it is there the first one's lines are all in.
      for (const id of ["warn-level-1", "warn-level-2"]) {
        const refused = await call(`http://127.0.0.1:${port}`, jar, "/auth/callback/credentials", {
          body: { csrfToken: token, email: "nobody@example.com", password: "not-a-password-1" },
          headers: { "X-Request-Id": id },
        });
        await refused.body?.cancel();
      }
      await waitUntil(() => output, (out) => out.includes('"reqId":"warn-level-2"'));
      expect(output).not.toContain('"msg":"request"');
      expect(output).not.toContain('"level":"info"');
      expect(output).toContain('"msg":"auth-failure"');
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  });
});
