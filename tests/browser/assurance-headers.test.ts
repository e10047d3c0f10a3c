// Headers on the production server (server/main.ts over the build): HSTS with
// includeSubDomains on every answer of an https deployment (pages, JSON, probes — the server sets
// the base headers itself), the pages' CSP pointing at POST /auth/csp-report, which answers 204
// and writes one line, and Clear-Site-Data on a real sign-out (docs/decisions/073).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { CookieJar } from "../support/http";

const USER = { email: "hsts@example.com", password: "correct horse battery staple" };

describe("an https deployment (AUTH_URL https, TLS ended by the proxy in front)", () => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await startApp({ AUTH_URL: "https://vestibule.test" });
  });
  afterAll(() => app?.stop());

  it("every answer carries HSTS for a year with the subdomains", async () => {
    for (const path of ["/auth/signin", "/auth/session", "/healthz", "/no-such-page"]) {
      const res = await fetch(`${app.url}${path}`, { headers: { Host: "vestibule.test" } });
      expect(res.headers.get("strict-transport-security"), path).toBe("max-age=31536000; includeSubDomains");
    }
  });
});

describe("AUTH_HSTS_SUBDOMAINS=false", () => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await startApp({ AUTH_URL: "https://vestibule.test", AUTH_HSTS_SUBDOMAINS: "false" });
  });
  afterAll(() => app?.stop());

  it("HSTS covers only the host itself", async () => {
    const res = await fetch(`${app.url}/auth/signin`, { headers: { Host: "vestibule.test" } });
    expect(res.headers.get("strict-transport-security")).toBe("max-age=31536000");
  });
});

describe("a plain-http deployment", () => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await startApp();
    await seedUser(app, USER);
  });
  afterAll(() => app?.stop());

  it("pages name the report endpoint; a browser's report gets 204 and one log line without the query", async () => {
    const page = await fetch(`${app.url}/auth/signin`);
    expect(page.headers.get("strict-transport-security")).toBeNull();
    expect(page.headers.get("content-security-policy")).toContain("; report-uri /auth/csp-report; report-to csp");
    expect(page.headers.get("reporting-endpoints")).toBe('csp="/auth/csp-report"');
    const report = { "csp-report": { "document-uri": `${app.url}/account?secret=1`, "violated-directive": "script-src-elem", "blocked-uri": "https://evil.example/a.js" } };
    const res = await fetch(`${app.url}/auth/csp-report`, { method: "POST", headers: { "Content-Type": "application/csp-report" }, body: JSON.stringify(report) });
    expect(res.status).toBe(204);
    const deadline = Date.now() + 5_000;
    while (!app.logs().includes('"csp-violation"') && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    const line = app.logs().split("\n").find((l) => l.includes('"csp-violation"'))!;
    expect(JSON.parse(line)).toMatchObject({ documentUri: `${app.url}/account`, directive: "script-src-elem", blocked: "https://evil.example" });
    expect(line).not.toContain("secret");
    const huge = await fetch(`${app.url}/auth/csp-report`, { method: "POST", headers: { "Content-Type": "application/csp-report" }, body: "x".repeat(20_000) });
    expect(huge.status).toBe(413);
  });

  it("signing out clears this browser's cache and storage", async () => {
    const jar = new CookieJar();
    const csrf = await fetch(`${app.url}/auth/csrf`);
    jar.apply(csrf);
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const form = { "Content-Type": "application/x-www-form-urlencoded" };
    const signIn = await fetch(`${app.url}/auth/callback/credentials`, {
      method: "POST",
      redirect: "manual",
      headers: { ...form, Cookie: jar.header() },
      body: new URLSearchParams({ csrfToken, email: USER.email, password: USER.password }),
    });
    jar.apply(signIn);
    expect(jar.get("authjs.session-token")).toBeTruthy();
    const out = await fetch(`${app.url}/auth/signout`, { method: "POST", redirect: "manual", headers: { ...form, Cookie: jar.header() }, body: new URLSearchParams({ csrfToken }) });
    expect(out.status).toBe(302);
    expect(out.headers.get("clear-site-data")).toBe('"cache", "storage"');
    jar.apply(out);
    expect(jar.get("authjs.session-token")).toBeUndefined();
  });
});
