// Clients behind a proxy (docs/decisions/025-client-address.md): with
// AUTH_TRUSTED_PROXIES each client behind the proxy has its own budget, whatever it writes at the
// left of X-Forwarded-For; without it, X-Forwarded-For is ignored even with AUTH_TRUST_HOST=true.
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { DEFAULT_LIMITS } from "../../../app/auth/core/limits.server";
import * as callbackRoute from "../../../app/routes/auth/callback";
import { createUser, PASSWORD, withEnv } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { callRoute, CookieJar, fetchCsrf, post } from "../../support/http";

const PROXY = "10.0.0.1";
const CLIENT_A = "203.0.113.1";
const CLIENT_B = "2001:db8::b";

async function attempt(email: string, password: string, forwardedFor: string) {
  const jar = new CookieJar();
  const csrfToken = await fetchCsrf(jar);
  const headers = { "X-Vestibule-Remote-Addr": PROXY, "X-Forwarded-For": forwardedFor };
  const request = post("/auth/callback/credentials", { csrfToken, email, password }, { jar, headers });
  return callRoute(callbackRoute.action, request, { provider: "credentials" });
}

/**
 * The per-client budget these tests spend, set through the limit's variable: what
 * is tested is whose budget an attempt spends, not its size, and each failure costs an Argon2
 * check against the dummy hash. The default (100 per hour) is tested in limits.test.ts.
 * docs/decisions/088-test-suite-time.md
 */
const CLIENT_BUDGET = { AUTH_RATE_LIMIT_CREDENTIALS_CLIENT: `10/${DEFAULT_LIMITS.CREDENTIALS_CLIENT.seconds}` };

/** Client A uses up its whole per-client budget on other people's addresses, spoofing the leftmost entry each time. */
async function exhaustClientA() {
  for (let i = 0; i < 10; i++) {
    const res = await attempt(`someone-${i}@example.com`, "guess", `198.51.100.${i % 250}, ${CLIENT_A}`);
    expect(res).toHaveErrorRedirect("CredentialsSignin");
  }
}

let undoEnv: () => void;
beforeEach(() => resetDatabase());
afterEach(() => undoEnv?.());

describe(`two clients behind one proxy (${dbLabel})`, () => {
  test("with AUTH_TRUSTED_PROXIES they are rate limited separately: A is refused, B is not", async () => {
    undoEnv = withEnv({ ...CLIENT_BUDGET, AUTH_TRUSTED_PROXIES: "10.0.0.0/8", AUTH_TRUST_HOST: undefined });
    await createUser();
    await exhaustClientA();

    // Changing what it writes at the left does not give A a new budget…
    const spoofed = await attempt("ada@example.com", PASSWORD, `${CLIENT_B}, ${CLIENT_A}`);
    expect(spoofed).toHaveErrorRedirect("RateLimited");
    expect(spoofed).not.toHaveSessionCookie();
    // …while B, behind the same proxy, still signs in.
    expect(await attempt("ada@example.com", PASSWORD, CLIENT_B)).toHaveSessionCookie();

    const refused = await testDb().authEvent.findMany({ where: { type: "rate-limited" } });
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((e) => e.ip))).toEqual(new Set([CLIENT_A]));
    const signin = await testDb().authEvent.findFirstOrThrow({ where: { type: "signin" } });
    expect(signin.ip).toBe(CLIENT_B);
  });

  test("without it, AUTH_TRUST_HOST=true does not believe X-Forwarded-For: both share the proxy's budget", async () => {
    undoEnv = withEnv({ ...CLIENT_BUDGET, AUTH_TRUSTED_PROXIES: undefined, AUTH_TRUST_HOST: "true", AUTH_ALLOWED_HOSTS: "localhost" });
    await createUser();
    await exhaustClientA();

    const b = await attempt("ada@example.com", PASSWORD, CLIENT_B);
    expect(b).toHaveErrorRedirect("RateLimited");
    expect(b).not.toHaveSessionCookie();
    const refused = await testDb().authEvent.findMany({ where: { type: "rate-limited" } });
    expect(new Set(refused.map((e) => e.ip))).toEqual(new Set([PROXY]));
  });
});
