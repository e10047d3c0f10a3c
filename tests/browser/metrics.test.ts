// GET /metrics under `npm start` (ADR 076): answered through the production server's dispatch (sirv
// finds no file, React Router's `*` route answers), the request histogram fed by both the fast path
// and React Router's pipeline, and the ordinary 404 without the token.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, credentialsSignIn } from "../support/app-client";
import { startApp, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { CookieJar } from "../support/http";

const TOKEN = "production-metrics-token-0123456789abcdef";
let app: RunningApp;
beforeAll(async () => {
  app = await startApp({ METRICS_TOKEN: TOKEN });
  await seedUser(app, { email: "ada@example.com", password: "correct horse battery staple" });
});
afterAll(() => app?.stop());

describe("/metrics under npm start", () => {
  it("a scraper with the token reads the sign-ins and the request durations of both paths", async () => {
    const { res } = await credentialsSignIn(app, "ada@example.com", "correct horse battery staple");
    expect(res.status).toBe(302);
    await (await call(app, new CookieJar(), "/auth/session")).text();
    const scrape = await call(app, new CookieJar(), "/metrics", { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get("Content-Type")).toContain("text/plain");
    const text = await scrape.text();
    expect(text).toContain('vestibule_signins_total{method="credentials",outcome="success"} 1');
    // /auth/session and /auth/csrf come through the fast path, the callback through React Router.
    expect(text).toMatch(/vestibule_http_request_duration_seconds_count\{route="\/auth\/session",method="GET",status="2xx"\} 1\n/);
    expect(text).toMatch(/vestibule_http_request_duration_seconds_count\{route="\/auth\/csrf",method="GET",status="2xx"\} 1\n/);
    expect(text).toMatch(/vestibule_http_request_duration_seconds_count\{route="\/auth\/callback\/:provider",method="POST",status="3xx"\} 1\n/);
    expect(text).toContain("vestibule_process_resident_memory_bytes");
    expect(text).not.toContain("ada@example.com");
  });

  it("without the token, or with a wrong one, it is the 404 of an unknown URL", async () => {
    const unknown = await call(app, new CookieJar(), "/no-such-page");
    const attempts: Record<string, string>[] = [{}, { Authorization: "Bearer wrong-token-0123456789abcdef0123456789" }];
    for (const headers of attempts) {
      const res = await call(app, new CookieJar(), "/metrics", { headers });
      expect(res.status).toBe(404);
      expect(res.headers.get("Content-Type")).toBe(unknown.headers.get("Content-Type"));
      // The same page but for the nonce and the asked path (the language menu returns to it).
      const page = (text: string, path: string) => text.replaceAll(/nonce="[^"]*"/g, "").replaceAll(path, "/<path>");
      expect(page(await res.text(), "/metrics")).toBe(page(await unknown.clone().text(), "/no-such-page"));
    }
  });
});
