// Headers: HSTS with includeSubDomains on an https AUTH_URL (AUTH_HSTS_SUBDOMAINS=false
// leaves it out), Clear-Site-Data on every answer that ends this browser's own session, and the
// CSP violation report endpoint the pages' policy points at (docs/decisions/073).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as accountRoute from "../../../app/routes/account";
import * as cspReportRoute from "../../../app/routes/auth/csp-report";
import * as signoutRoute from "../../../app/routes/auth/signout";
import { getConfig } from "../../../app/auth/core/config.server";
import { baseSecurityHeaders, contentSecurityPolicy, REPORTING_ENDPOINTS } from "../../../app/auth/core/security-headers.server";
import { createUser, signIn, withEnv } from "../../support/auth";
import { resetDatabase } from "../../support/db";
import { callRoute, fetchCsrf, get, ORIGIN, post, routeArgs } from "../../support/http";
import { runWithRootMiddleware } from "../../support/root-middleware";

let undoEnv: (() => void) | null = null;
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
  vi.restoreAllMocks();
});
beforeEach(async () => {
  await resetDatabase();
});

/** The root middlewares around the route's action, as React Router runs a POST. */
function run(action: (args: any) => unknown, request: Request): Promise<Response> {
  return runWithRootMiddleware(action, request);
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
        "document-uri": `${ORIGIN}/account?token=secret#frag`,
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
    expect(logged[0]).toMatchObject({ level: "warn", documentUri: `${ORIGIN}/account`, directive: "script-src-elem", blocked: "https://evil.example", disposition: "enforce" });
    const line = lines.find((l) => l.includes('"csp-violation"'))!;
    for (const leaked of ["secret", "ada@example.com", "x.js", "alert", "frag"]) expect(line).not.toContain(leaked);
  });

  it("a Reporting API batch (application/reports+json) logs each csp-violation and skips other report types", async () => {
    const lines = captureLog();
    const batch = [
      { type: "csp-violation", url: `${ORIGIN}/`, body: { documentURL: `${ORIGIN}/?q=1`, effectiveDirective: "script-src-elem", blockedURL: "inline", disposition: "enforce" } },
      { type: "deprecation", url: `${ORIGIN}/`, body: { id: "x" } },
      { type: "csp-violation", url: `${ORIGIN}/auth/signin`, body: { documentURL: `${ORIGIN}/auth/signin`, effectiveDirective: "form-action", blockedURL: "https://idp.example/authorize?state=s" } },
    ];
    const res = await run(
      cspReportRoute.action,
      new Request(`${ORIGIN}/auth/csp-report`, { method: "POST", headers: { "Content-Type": "application/reports+json", "X-Vestibule-Remote-Addr": "10.0.0.9" }, body: JSON.stringify(batch) }),
    );
    expect(res.status).toBe(204);
    expect(violations(lines).map((v) => [v.documentUri, v.directive, v.blocked])).toEqual([
      [`${ORIGIN}/`, "script-src-elem", "inline"],
      [`${ORIGIN}/auth/signin`, "form-action", "https://idp.example"],
    ]);
  });

  it("a report from a sandboxed frame (Origin: null) or another origin is accepted: it changes nothing", async () => {
    captureLog();
    for (const origin of ["null", "https://elsewhere.example"]) {
      const request = cspReport({ "document-uri": `${ORIGIN}/`, "violated-directive": "script-src" });
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
    // A report that names no page of this site is not logged; one that does keeps only the fields of the right kinds.
    expect(violations(lines)).toEqual([]);
    expect((await send("application/csp-report", JSON.stringify({ "csp-report": { "document-uri": `${ORIGIN}/`, "blocked-uri": { a: 1 }, "violated-directive": "<script>" } }))).status).toBe(204);
    expect(violations(lines)).toEqual([expect.objectContaining({ documentUri: `${ORIGIN}/`, blocked: null, directive: null })]);
    expect((await callRoute(cspReportRoute.loader, get("/auth/csp-report"))).status).toBe(400);
  });

  const batchOf = (count: number, documentURL = `${ORIGIN}/account`) =>
    new Request(`${ORIGIN}/auth/csp-report`, {
      method: "POST",
      headers: { "Content-Type": "application/reports+json", "X-Vestibule-Remote-Addr": "10.0.0.7" },
      body: JSON.stringify(Array.from({ length: count }, () => ({ type: "csp-violation", url: documentURL, body: { documentURL, effectiveDirective: "script-src-elem", blockedURL: "inline" } }))),
    });

  it("a flooder who packs many reports into one request pays for each report: one batch of 10 under a limit of 3 logs 3 lines and spends the budget", async () => {
    const lines = captureLog();
    undoEnv = withEnv({ AUTH_RATE_LIMIT_CSP_REPORT: "3/60" });
    expect((await run(cspReportRoute.action, batchOf(10))).status).toBe(204);
    expect(violations(lines)).toHaveLength(3);
    const refused = await run(cspReportRoute.action, batchOf(1));
    expect(refused.status).toBe(429);
    expect(violations(lines)).toHaveLength(3);
  });

  it("a request of more reports than the cap per request logs no more than the cap (10), and the rest are not read", async () => {
    const lines = captureLog();
    expect((await run(cspReportRoute.action, batchOf(40))).status).toBe(204);
    expect(violations(lines)).toHaveLength(10);
  });

  it("a sender that reports another site's pages gets nothing of theirs logged: only this site's documents, by origin and path; a blocked resource elsewhere by its origin", async () => {
    const lines = captureLog();
    for (const documentUri of ["https://other.example/inbox/ada@example.com?msg=42", `${ORIGIN.replace("localhost", "127.0.0.1")}/x`, "https://localhost:3000/account"]) {
      expect((await run(cspReportRoute.action, cspReport({ "document-uri": documentUri, "violated-directive": "script-src", "blocked-uri": "https://cdn.other.example/lib.js?k=1" }))).status).toBe(204);
    }
    expect(violations(lines)).toEqual([]);
    expect((await run(cspReportRoute.action, cspReport({ "document-uri": `${ORIGIN}/account?token=t`, "violated-directive": "script-src", "blocked-uri": "https://cdn.other.example/lib.js?k=1" }))).status).toBe(204);
    expect(violations(lines)).toEqual([expect.objectContaining({ documentUri: `${ORIGIN}/account`, blocked: "https://cdn.other.example" })]);
    expect(lines.join("\n")).not.toMatch(/other\.example\/inbox|ada@example|msg=42|lib\.js/);
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
