// GET /metrics (ADR 076) through React Router's whole pipeline: a scraper with the
// token reads counts that equal the audit trail after a scripted set of sign-ins; everyone else —
// no token, a wrong one, METRICS_TOKEN unset — gets the ordinary 404 page; no label carries an
// address or an id.
import client from "prom-client";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../app/auth/core/config.server.ts";
import { resetMetrics } from "../../../app/auth/core/metrics.server.ts";
import { appHandler } from "../../support/app-handler.ts";
import { createUser, PASSWORD } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar, get, ORIGIN, post } from "../../support/http.ts";
import { linkIn, waitForMessages } from "../../support/smtp-sink.ts";
import { configure, smtpEnv, useSmtpSink } from "../email/helpers.ts";

const TOKEN = "metrics-token-0123456789abcdef0123456789abcdef";
const smtp = useSmtpSink({ METRICS_TOKEN: TOKEN });

let handle: (request: Request) => Promise<Response>;
beforeAll(async () => {
  handle = await appHandler();
});

async function send(request: Request, jar?: CookieJar): Promise<Response> {
  const res = await handle(request);
  jar?.apply(res);
  return res;
}

async function csrf(jar: CookieJar): Promise<string> {
  const res = await send(get("/auth/csrf", { jar }), jar);
  return ((await res.json()) as { csrfToken: string }).csrfToken;
}

async function passwordSignIn(email: string, password: string, jar = new CookieJar()) {
  const csrfToken = await csrf(jar);
  const res = await send(post("/auth/callback/credentials", { csrfToken, email, password }, { jar }), jar);
  await res.body?.cancel();
  return res;
}

async function requestLink(email: string, jar = new CookieJar()) {
  const csrfToken = await csrf(jar);
  const res = await send(post("/auth/signin/email", { csrfToken, email }, { jar }), jar);
  await res.body?.cancel();
  return res;
}

async function scrape(authorization: string | null = `Bearer ${TOKEN}`) {
  return handle(new Request(`${ORIGIN}/metrics`, { headers: authorization ? { Authorization: authorization } : {} }));
}

/** The text format as `name{a="b",…}` → value. */
function parse(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

async function samples(): Promise<Map<string, number>> {
  const res = await scrape();
  expect(res.status).toBe(200);
  return parse(await res.text());
}

/** The ordinary 404 page, without its per-page nonce and the asked path (the language menu returns to it). */
async function page404(res: Response, path: string) {
  const body = (await res.text()).replaceAll(/nonce="[^"]*"/g, "").replaceAll(path, "/<path>");
  return { status: res.status, type: res.headers.get("Content-Type"), body };
}

describe(`GET /metrics (${dbLabel})`, () => {
  it("after right and wrong passwords, an e-mail link, a failed e-mail and a rate-limited attempt, the counts equal the audit rows", async () => {
    configure({ ...smtpEnv(smtp.sink.url), METRICS_TOKEN: TOKEN, AUTH_RATE_LIMIT_CREDENTIALS_ACCOUNT_CLIENT: "2/900" });
    resetMetrics();
    const user = await createUser("ada@example.com", "Ada");

    expect((await passwordSignIn("ada@example.com", PASSWORD)).headers.get("Location")).not.toContain("error=");
    expect((await passwordSignIn("ada@example.com", "wrong-password-1")).headers.get("Location")).toContain("error=CredentialsSignin");
    expect((await passwordSignIn("ada@example.com", "wrong-password-2")).headers.get("Location")).toContain("error=CredentialsSignin");
    expect((await passwordSignIn("ada@example.com", "wrong-password-3")).headers.get("Location")).toContain("error=RateLimited");

    expect((await requestLink("grace@example.com")).status).toBe(302);
    const [message] = await waitForMessages(smtp.sink, 1);
    const link = linkIn(message!);
    const opened = await send(get(link.pathname + link.search, { jar: new CookieJar() }));
    expect(opened.status).toBe(302);
    expect(opened.headers.get("Location")).not.toContain("error=");

    smtp.sink.reject("rcpt", 550);
    expect((await requestLink("nobody@example.com")).headers.get("Location")).toContain("error=EmailSignin");

    const m = await samples();
    // What the script did…
    expect(m.get('vestibule_signins_total{method="credentials",outcome="success"}')).toBe(1);
    expect(m.get('vestibule_signins_total{method="credentials",outcome="failure"}')).toBe(2);
    expect(m.get('vestibule_signins_total{method="email",outcome="success"}')).toBe(1);
    expect(m.get('vestibule_rate_limit_refusals_total{limit="CREDENTIALS_ACCOUNT_CLIENT"}')).toBe(1);
    expect(m.get('vestibule_emails_sent_total{purpose="signin"}')).toBe(1);
    expect(m.get('vestibule_emails_failed_total{purpose="signin"}')).toBe(1);
    expect(m.get('vestibule_sessions_created_total{strategy="jwt"}')).toBe(2);

    // …and exactly what the audit trail says, series by series.
    const events = await testDb().authEvent.findMany({ select: { type: true, detail: true } });
    const fromAudit = new Map<string, number>();
    const add = (key: string) => fromAudit.set(key, (fromAudit.get(key) ?? 0) + 1);
    for (const e of events) {
      const d = JSON.parse(e.detail ?? "{}") as Record<string, string>;
      if (e.type === "signin") {
        add(`vestibule_signins_total{method="${d.provider}",outcome="success"}`);
        add(`vestibule_sessions_created_total{strategy="${d.strategy}"}`);
      }
      if (e.type === "signin-failed") add(`vestibule_signins_total{method="${d.provider}",outcome="failure"}`);
      if (e.type === "rate-limited") add(`vestibule_rate_limit_refusals_total{limit="${d.bucket}"}`);
      if (e.type === "email-sent") add(`vestibule_emails_sent_total{purpose="${d.purpose}"}`);
    }
    const counted = [...m].filter(([k]) => /^vestibule_(signins|sessions_created|rate_limit_refusals|emails_sent)_total\{/.test(k));
    expect(new Map(counted)).toEqual(fromAudit);

    // One observation per request, by route pattern: 4 password posts and 2 link requests so far.
    expect(m.get('vestibule_http_request_duration_seconds_count{route="/auth/callback/:provider",method="POST",status="3xx"}')).toBe(4);
    expect(m.get('vestibule_http_request_duration_seconds_count{route="/auth/signin/:provider",method="POST",status="3xx"}')).toBe(2);
    expect(m.get('vestibule_http_request_duration_seconds_count{route="/auth/csrf",method="GET",status="2xx"}')).toBe(6);
    // Node's own process metrics come along.
    expect([...m.keys()].some((k) => k.startsWith("vestibule_process_resident_memory_bytes"))).toBe(true);
    expect([...m.keys()].some((k) => k.startsWith("vestibule_nodejs_eventloop_lag_seconds"))).toBe(true);
    // All of prom-client's defaults but the collection-duration histogram (ADR 100).
    const defaults = new client.Registry();
    client.collectDefaultMetrics({ register: defaults, prefix: "vestibule_" });
    const defaultNames = (await defaults.getMetricsAsJSON()).map((metric) => metric.name);
    // By the names the scrape declares (# TYPE): a gauge with no sample now (no active request) still counts.
    const exposed = new Set([...(await (await scrape()).text()).matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!));
    expect(defaultNames.filter((name) => !exposed.has(name))).toEqual(["vestibule_nodejs_gc_duration_seconds"]);

    // No address, no id, no raw URL in any label.
    const text = await (await scrape()).text();
    const grace = await testDb().user.findUniqueOrThrow({ where: { email: "grace@example.com" } });
    for (const secret of ["ada@example.com", "grace@example.com", "nobody@example.com", "@", user.id, grace.id, link.searchParams.get("token")!]) {
      expect(text).not.toContain(secret);
    }
    for (const labels of text.matchAll(/\{([^}]*)\}/g)) {
      for (const [, value] of labels[1]!.matchAll(/="([^"]*)"/g)) expect(value).toMatch(/^[A-Za-z0-9_.:/*+-]{1,60}$/);
    }
  });

  it("a page with a route parameter is counted under its pattern, not its URL", async () => {
    resetMetrics();
    for (const path of ["/no-such-page-1", "/no-such-page-2", "/auth/no-such-endpoint"]) await (await send(get(path))).body?.cancel();
    const m = await samples();
    const routes = [...m.keys()].filter((k) => k.startsWith("vestibule_http_request_duration_seconds_count")).map((k) => /route="([^"]*)"/.exec(k)![1]);
    expect(routes).not.toContain("/no-such-page-1");
    expect(m.get('vestibule_http_request_duration_seconds_count{route="/*",method="GET",status="4xx"}')).toBe(2);
  });

  it("answers no token, a wrong token, another scheme and a POST with the ordinary 404 page", async () => {
    const ordinary = await page404(await send(get("/no-such-page")), "/no-such-page");
    expect(ordinary.status).toBe(404);
    for (const authorization of [null, "Bearer wrong-token-0123456789abcdef0123456789abcdef", `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, `Bearer ${TOKEN.slice(1)}`]) {
      expect(await page404(await scrape(authorization), "/metrics")).toEqual(ordinary);
    }
    const posted = await send(post("/metrics", {}, { headers: { Authorization: `Bearer ${TOKEN}` } }));
    expect(posted.status).toBe(404);
    expect((await scrape()).status).toBe(200);
  });

  it("answers 404 to everyone, the right token included, while METRICS_TOKEN is unset", async () => {
    configure({ METRICS_TOKEN: undefined });
    const ordinary = await page404(await send(get("/no-such-page")), "/no-such-page");
    expect(await page404(await scrape(), "/metrics")).toEqual(ordinary);
  });

  it("refuses to start with a METRICS_TOKEN too short to be a secret, naming the variable", () => {
    expect(() => loadConfig({ ...process.env, METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN must be at least 32 characters/);
    expect(() => loadConfig({ ...process.env, METRICS_TOKEN: `${"x".repeat(32)} y` })).toThrow(/METRICS_TOKEN/);
    expect(loadConfig({ ...process.env, METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
  });

  it("shows the PostgreSQL pool's use, and nothing about a pool on SQLite", async () => {
    await testDb().user.count();
    const m = await samples();
    if (dbLabel === "postgres") {
      expect(m.get('vestibule_db_pool_max{pool="main"}')).toBe(10);
      expect(m.get('vestibule_db_pool_connections{pool="main"}')).toBeGreaterThanOrEqual(1);
      expect(m.get('vestibule_db_pool_waiting{pool="main"}')).toBe(0);
    } else {
      expect([...m.keys()].some((k) => k.startsWith("vestibule_db_pool_"))).toBe(false);
    }
  });
});
