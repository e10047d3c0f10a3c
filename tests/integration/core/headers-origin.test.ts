// A POST whose Origin names another site is refused even with a valid CSRF token —
// MissingCSRF on the sign-in flow, 403 on JSON endpoints and page actions — except an OAuth
// provider's form_post callback; every answer carries the base security headers; the pages'
// form-action lists the providers' authorization origins. Requests go through the app's root
// middleware (app/root.tsx) and then the route's real action, as React Router runs them.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as accountRoute from "../../../app/routes/account";
import * as callbackRoute from "../../../app/routes/auth/callback";
import * as logRoute from "../../../app/routes/auth/log";
import * as sessionRoute from "../../../app/routes/auth/session";
import * as signinRoute from "../../../app/routes/auth/signin";
import * as signoutRoute from "../../../app/routes/auth/signout";
import { getConfig } from "../../../app/auth/core/config.server";
import { baseSecurityHeaders, contentSecurityPolicy } from "../../../app/auth/core/security-headers.server";
import { authorizationOrigins } from "../../../app/auth/signin/registry.server";
import { createUser, signIn, withEnv } from "../../support/auth";
import { resetDatabase } from "../../support/db";
import { callRoute, CookieJar, fetchCsrf, ORIGIN, post, routeArgs } from "../../support/http";
import { startTestIdp, type TestIdp } from "../../support/idp";
import { runWithRootMiddleware } from "../../support/root-middleware";

const EVIL = "https://evil.example";

/** The root middlewares around the route's action, as React Router runs a POST. */
function run(action: (args: any) => unknown, request: Request, params: Record<string, string> = {}): Promise<Response> {
  return runWithRootMiddleware(action, request, params);
}

let undoEnv: (() => void) | null = null;
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
});
beforeEach(async () => {
  await resetDatabase();
});

async function signedIn() {
  await createUser();
  const { jar } = await signIn();
  const csrfToken = await fetchCsrf(jar);
  return { jar, csrfToken };
}

describe("a POST from another site, with a valid CSRF token", () => {
  it.each([EVIL, "null", "http://localhost:3001", "https://localhost:3000"])("Origin %s: JSON endpoints and page actions answer 403", async (origin) => {
    const { jar, csrfToken } = await signedIn();
    const headers = { Origin: origin };
    const session = await run(sessionRoute.action, post("/auth/session", { csrfToken, data: { name: "Mallory" } }, { jar, json: true, headers }));
    expect(session.status).toBe(403);
    const log = await run(logRoute.action, post("/auth/_log", { csrfToken, level: "error", message: "x" }, { jar, json: true, headers }));
    expect(log.status).toBe(403);
    const account = await run(accountRoute.action, post("/account", { csrfToken, intent: "profile", name: "Mallory" }, { jar, headers }));
    expect(account.status).toBe(403);
    expect(account.headers.get("X-Content-Type-Options")).toBe("nosniff");
  });

  it.each([EVIL, "null"])("Origin %s: sign-in, the credentials callback and sign-out redirect with MissingCSRF", async (origin) => {
    const { jar, csrfToken } = await signedIn();
    const headers = { Origin: origin };
    const body = { csrfToken, email: "ada@example.com", password: "correct horse battery staple" };
    const credentials = await run(callbackRoute.action, post("/auth/callback/credentials", body, { jar, headers }), { provider: "credentials" });
    expect(credentials).toHaveErrorRedirect("MissingCSRF");
    expect(credentials.headers.getSetCookie().join()).not.toMatch(/session-token=[^;]/);
    const root = await run(signinRoute.action, post("/auth/signin", { csrfToken }, { jar, headers }));
    expect(root).toHaveErrorRedirect("MissingCSRF");
    const signOut = await run(signoutRoute.action, post("/auth/signout", { csrfToken }, { jar, headers }));
    expect(signOut).toHaveErrorRedirect("MissingCSRF");
    // JSON-redirect mode: 200 {url} naming the same error.
    const json = await run(signoutRoute.action, post("/auth/signout", { csrfToken, json: "true" }, { jar, headers }));
    expect(json.status).toBe(200);
    expect(new URL(((await json.json()) as { url: string }).url).searchParams.get("error")).toBe("MissingCSRF");
  });

  it("the same requests from our own origin, or without Origin, are served", async () => {
    for (const headers of [{ Origin: ORIGIN }, {}] as Record<string, string>[]) {
      const { jar, csrfToken } = await signedIn();
      const session = await run(sessionRoute.action, post("/auth/session", { csrfToken, data: { name: "Ada L" } }, { jar, json: true, headers }));
      expect(session.status).toBe(200);
      const signOut = await run(signoutRoute.action, post("/auth/signout", { csrfToken }, { jar, headers }));
      expect(signOut.status).toBe(302);
      expect(new URL(signOut.headers.get("Location")!).searchParams.get("error")).toBeNull();
    }
  });
});

describe("the OAuth form_post callback", () => {
  let idp: TestIdp;
  beforeAll(async () => {
    idp = await startTestIdp();
  });
  afterAll(() => idp?.stop());

  it("a POST to /auth/callback/<oauth id> from the provider's origin reaches the flow's own checks", async () => {
    idp.configure();
    const jar = new CookieJar();
    const res = await run(callbackRoute.action, post("/auth/callback/oidc", { code: "x", state: "not-ours" }, { jar, headers: { Origin: idp.issuer } }), {
      provider: "oidc",
    });
    // No flow cookie for this state: the OAuth checks refuse it, not the Origin rule.
    expect(res.status).toBe(302);
    const error = new URL(res.headers.get("Location")!).searchParams.get("error");
    expect(error).not.toBeNull();
    expect(error).not.toBe("MissingCSRF");
  });

  it("authorizationOrigins: a stated endpoint's origin (GitHub) and the OIDC issuer's (its authorization endpoint's)", async () => {
    idp.configure({ AUTH_GITHUB_ID: "gh", AUTH_GITHUB_SECRET: "gh-secret" });
    const before = authorizationOrigins(getConfig());
    expect(before).toContain("https://github.com");
    expect(before).toContain(new URL(idp.issuer).origin);
    const csp = contentSecurityPolicy("abc", before);
    expect(csp).toContain(`form-action 'self' ${new URL(idp.issuer).origin} https://github.com`);
    delete process.env.AUTH_GITHUB_ID;
    delete process.env.AUTH_GITHUB_SECRET;
  });
});

describe("base security headers", () => {
  it("HSTS only when AUTH_URL is https", () => {
    undoEnv = withEnv({ AUTH_URL: "https://app.example" });
    expect(baseSecurityHeaders(getConfig())["Strict-Transport-Security"]).toBe("max-age=31536000; includeSubDomains");
    undoEnv();
    undoEnv = withEnv({ AUTH_URL: "http://localhost:3000" });
    expect(baseSecurityHeaders(getConfig())).not.toHaveProperty("Strict-Transport-Security");
    expect(baseSecurityHeaders(getConfig())).toEqual({
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "same-origin",
      "X-Frame-Options": "DENY",
      "Cross-Origin-Opener-Policy": "same-origin",
    });
  });

  it("the CSP has a nonce for scripts and no 'unsafe-inline'", () => {
    const csp = contentSecurityPolicy("n0nce", []);
    expect(csp).toBe("script-src 'self' 'nonce-n0nce'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'; report-uri /auth/csp-report; report-to csp");
  });
});
