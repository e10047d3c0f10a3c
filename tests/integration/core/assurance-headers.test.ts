// Contract §16's headers: HSTS with includeSubDomains on an https AUTH_URL (AUTH_HSTS_SUBDOMAINS=false
// leaves it out), Clear-Site-Data on every answer that ends this browser's own session, and the
// CSP violation report endpoint the pages' policy points at (docs/decisions/073).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { middleware } from "../../../app/root";
import * as accountRoute from "../../../app/routes/account";
import * as cspReportRoute from "../../../app/routes/auth/csp-report";
import * as signoutRoute from "../../../app/routes/auth/signout";
import { getConfig } from "../../../app/auth/core/config.server";
import { baseSecurityHeaders, contentSecurityPolicy, REPORTING_ENDPOINTS } from "../../../app/auth/core/security-headers.server";
import { createUser, signIn, withEnv } from "../../support/auth";
import { resetDatabase } from "../../support/db";
import { callRoute, fetchCsrf, get, ORIGIN, post, routeArgs } from "../../support/http";

let undoEnv: (() => void) | null = null;
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
  vi.restoreAllMocks();
});
beforeEach(async () => {
  await resetDatabase();
});

/** The root middleware around the route's action, as React Router runs a POST. */
function run(action: (args: any) => unknown, request: Request): Promise<Response> {
  const [rootMiddleware] = middleware;
  return Promise.resolve(rootMiddleware!(routeArgs(request) as never, () => callRoute(action, request)) as Promise<Response>);
}

const CLEAR_SITE_DATA = '"cache", "storage"';

describe("Strict-Transport-Security", () => {
  it("an https deployment tells browsers to use https for a year, subdomains included", () => {
    undoEnv = withEnv({ AUTH_URL: "https://app.example", AUTH_HSTS_SUBDOMAINS: undefined });
    expect(baseSecurityHeaders(getConfig())["Strict-Transport-Security"]).toBe("max-age=31536000; includeSubDomains");
  });

  it("AUTH_HSTS_SUBDOMAINS=false leaves the subdomains out; plain http gets no HSTS at all", () => {
    undoEnv = withEnv({ AUTH_URL: "https://app.example", AUTH_HSTS_SUBDOMAINS: "false" });
    expect(baseSecurityHeaders(getConfig())["Strict-Transport-Security"]).toBe("max-age=31536000");
    undoEnv();
    undoEnv = withEnv({ AUTH_URL: "http://localhost:3000", AUTH_HSTS_SUBDOMAINS: undefined });
    expect(baseSecurityHeaders(getConfig())).not.toHaveProperty("Strict-Transport-Security");
  });

  it("an operator's typo in AUTH_HSTS_SUBDOMAINS is a configuration error, not a silent default", () => {
    undoEnv = withEnv({ AUTH_HSTS_SUBDOMAINS: "nope" });
    expect(() => getConfig()).toThrow(/AUTH_HSTS_SUBDOMAINS must be "true" or "false"/);
  });
});

describe("Clear-Site-Data on sign-out", () => {
  it.each([false, true])("POST /auth/signout (json %s) clears the cache and storage, and deletes the session cookie itself", async (json) => {
    await createUser();
    const { jar } = await signIn();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(signoutRoute.action, post("/auth/signout", json ? { csrfToken, json: "true" } : { csrfToken }, { jar }));
    expect(res.status).toBe(json ? 200 : 302);
    expect(res.headers.get("Clear-Site-Data")).toBe(CLEAR_SITE_DATA);
    expect(res.headers.get("Clear-Site-Data")).not.toContain("cookies");
    expect(res.headers.getSetCookie().join("\n")).toMatch(/session-token=;/);
  });

  it("a sign-out refused for a missing CSRF token clears nothing", async () => {
    await createUser();
    const { jar } = await signIn();
    const res = await callRoute(signoutRoute.action, post("/auth/signout", {}, { jar }));
    expect(res).toHaveErrorRedirect("MissingCSRF");
    expect(res.headers.get("Clear-Site-Data")).toBeNull();
  });

  it("/account: signing out everywhere, or this device from the list, clears this browser too; signing out the others does not", async () => {
    await createUser();
    for (const intent of ["revoke-all", "revoke-this", "revoke-others"] as const) {
      const { jar } = await signIn();
      const csrfToken = await fetchCsrf(jar);
      const page = (await (await callRoute(accountRoute.loader, get("/account", { jar }))).json()) as { sessions: { id: string; current: boolean }[] };
      const sessionId = page.sessions.find((s) => s.current)!.id;
      const body = intent === "revoke-this" ? { csrfToken, intent: "revoke-session", sessionId } : { csrfToken, intent };
      const res = await callRoute(accountRoute.action, post("/account", body, { jar }));
      expect(res.status).toBe(302);
      expect(res.headers.get("Clear-Site-Data")).toBe(intent === "revoke-others" ? null : CLEAR_SITE_DATA);
    }
  });
});

const cspReport = (report: Record<string, unknown>) =>
  new Request(`${ORIGIN}/auth/csp-report`, {
    method: "POST",
    headers: { "Content-Type": "application/csp-report", "X-Vestibule-Remote-Addr": "10.0.0.9" },
    body: JSON.stringify({ "csp-report": report }),
  });

function captureLog(): string[] {
  const lines: string[] = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
  return lines;
}
const violations = (lines: string[]) => lines.filter((l) => l.includes('"csp-violation"')).map((l) => JSON.parse(l) as Record<string, unknown>);

describe("POST /auth/csp-report", () => {
  it("the pages' policy points browsers at it (report-uri and report-to with Reporting-Endpoints)", () => {
    const csp = contentSecurityPolicy("n", []);
    expect(csp).toContain("report-uri /auth/csp-report");
    expect(csp).toContain("report-to csp");
    expect(REPORTING_ENDPOINTS).toBe('csp="/auth/csp-report"');
  });

  it("a browser's report-uri report is logged as one line: the page without its query, the directive, the blocked origin; 204", async () => {
    const lines = captureLog();
    const res = await run(
      cspReportRoute.action,
      cspReport({
        "document-uri": "https://app.example/account?token=secret#frag",
        "violated-directive": "script-src-elem",
        "effective-directive": "script-src-elem",
        "blocked-uri": "https://evil.example/x.js?user=ada@example.com",
        "script-sample": "alert(document.cookie)",
        disposition: "enforce",
      }),
    );
    expect(res.status).toBe(204);
    const logged = violations(lines);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: "warn", documentUri: "https://app.example/account", directive: "script-src-elem", blocked: "https://evil.example", disposition: "enforce" });
    const line = lines.find((l) => l.includes('"csp-violation"'))!;
    for (const leaked of ["secret", "ada@example.com", "x.js", "alert", "frag"]) expect(line).not.toContain(leaked);
  });

  it("a Reporting API batch (application/reports+json) logs each csp-violation and skips other report types", async () => {
    const lines = captureLog();
    const batch = [
      { type: "csp-violation", url: "https://app.example/", body: { documentURL: "https://app.example/?q=1", effectiveDirective: "script-src-elem", blockedURL: "inline", disposition: "enforce" } },
      { type: "deprecation", url: "https://app.example/", body: { id: "x" } },
      { type: "csp-violation", url: "https://app.example/auth/signin", body: { documentURL: "https://app.example/auth/signin", effectiveDirective: "form-action", blockedURL: "https://idp.example/authorize?state=s" } },
    ];
    const res = await run(
      cspReportRoute.action,
      new Request(`${ORIGIN}/auth/csp-report`, { method: "POST", headers: { "Content-Type": "application/reports+json", "X-Vestibule-Remote-Addr": "10.0.0.9" }, body: JSON.stringify(batch) }),
    );
    expect(res.status).toBe(204);
    expect(violations(lines).map((v) => [v.documentUri, v.directive, v.blocked])).toEqual([
      ["https://app.example/", "script-src-elem", "inline"],
      ["https://app.example/auth/signin", "form-action", "https://idp.example"],
    ]);
  });

  it("a report from a sandboxed frame (Origin: null) or another origin is accepted: it changes nothing", async () => {
    captureLog();
    for (const origin of ["null", "https://elsewhere.example"]) {
      const request = cspReport({ "document-uri": "https://app.example/", "violated-directive": "script-src" });
      request.headers.set("Origin", origin);
      expect((await run(cspReportRoute.action, request)).status).toBe(204);
    }
  });

  it("garbage gets a 4xx and no log line, never a 500", async () => {
    const lines = captureLog();
    const send = (type: string, body: string) =>
      run(cspReportRoute.action, new Request(`${ORIGIN}/auth/csp-report`, { method: "POST", headers: { "Content-Type": type, "X-Vestibule-Remote-Addr": "10.0.0.9" }, body }));
    expect((await send("application/csp-report", "{not json")).status).toBe(400);
    expect((await send("application/csp-report", "[]")).status).toBe(400);
    expect((await send("application/csp-report", '{"csp-report": "x"}')).status).toBe(400);
    expect((await send("application/csp-report", '{"csp-report": {"document-uri": "\\u0000"}}')).status).toBe(400);
    expect((await send("application/reports+json", '[{"type": "csp-violation", "body": 5}]')).status).toBe(400);
    expect((await send("text/plain", '{"csp-report": {}}')).status).toBe(415);
    expect((await send("application/csp-report", JSON.stringify({ "csp-report": { "script-sample": "x".repeat(9000) } }))).status).toBe(413);
    // Fields of the wrong kinds are dropped, not trusted.
    expect((await send("application/csp-report", '{"csp-report": {"document-uri": 5, "blocked-uri": {"a": 1}, "violated-directive": "<script>"}}')).status).toBe(204);
    expect(violations(lines)).toEqual([expect.objectContaining({ documentUri: null, blocked: null, directive: null })]);
    expect((await callRoute(cspReportRoute.loader, get("/auth/csp-report"))).status).toBe(400);
  });

  it("a client that floods it is cut off at its limit (AUTH_RATE_LIMIT_CSP_REPORT), others are not", async () => {
    captureLog();
    undoEnv = withEnv({ AUTH_RATE_LIMIT_CSP_REPORT: "3/60" });
    const send = (client: string) => {
      const request = cspReport({ "document-uri": "https://app.example/", "violated-directive": "script-src" });
      request.headers.set("X-Vestibule-Remote-Addr", client);
      return run(cspReportRoute.action, request);
    };
    for (let i = 0; i < 3; i++) expect((await send("10.0.0.1")).status).toBe(204);
    const refused = await send("10.0.0.1");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect((await send("10.0.0.2")).status).toBe(204);
  });
});
