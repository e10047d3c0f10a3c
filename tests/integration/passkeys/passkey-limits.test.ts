// The failure-only limit on passkey answers (ADR 063): every POST
// /auth/callback/passkey answer that signs nobody in counts against its client; a sign-in never
// does; past the limit the client is refused (RateLimited, Retry-After) before anything is checked.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as callbackRoute from "../../../app/routes/auth/callback";
import * as optionsRoute from "../../../app/routes/auth/webauthn-options";
import { createUser, signIn, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";
import { SoftwareAuthenticator, type CeremonyOverrides } from "../../support/passkey-authenticator.ts";

let undoEnv: (() => void) | null = null;
beforeEach(async () => {
  await resetDatabase();
  undoEnv = withEnv({ AUTH_RATE_LIMIT_PASSKEY_CLIENT: "3/900" });
});
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
});

async function options(jar: CookieJar, action?: string) {
  const res = await callRoute(optionsRoute.loader, get(`/auth/webauthn-options/passkey${action ? `?action=${action}` : ""}`, { jar }), { provider: "passkey" });
  jar.apply(res);
  return (await res.json()) as { options: any };
}

/** One passkey answer from `client`, in a fresh browser; `json`: as next-auth/webauthn posts it. */
async function passkeyAnswer(authenticator: SoftwareAuthenticator, client: string, { json = false, o = {} as CeremonyOverrides } = {}) {
  const jar = new CookieJar();
  const { options: requestOptions } = await options(jar);
  const csrfToken = await fetchCsrf(jar);
  const data = JSON.stringify(authenticator.authenticate(requestOptions, o));
  const headers = { "X-Vestibule-Remote-Addr": client, ...(json ? { "X-Auth-Return-Redirect": "1" } : {}) };
  return callRoute(callbackRoute.action, post("/auth/callback/passkey", { csrfToken, action: "authenticate", data, callbackUrl: "/account" }, { jar, headers }), {
    provider: "passkey",
  });
}

async function adaWithPasskey() {
  await createUser();
  const { jar } = await signIn();
  const authenticator = new SoftwareAuthenticator();
  const { options: creation } = await options(jar, "register");
  const csrfToken = await fetchCsrf(jar);
  const res = await callRoute(callbackRoute.action, post("/auth/callback/passkey", { csrfToken, action: "register", data: JSON.stringify(authenticator.register(creation)) }, { jar }), {
    provider: "passkey",
  });
  expect(res).toHaveRedirect("/account");
  return authenticator;
}

/** The error code a form post's redirect or a JSON client's {url} names. */
async function errorOf(res: Response): Promise<string | null> {
  const location = res.headers.get("Location") ?? ((await res.clone().json()) as { url: string }).url;
  return new URL(location).searchParams.get("error");
}

const ATTACKER = "203.0.113.66";
const OWNER = "198.51.100.7";

describe(`passkey answers: failures count per client (${dbLabel})`, () => {
  it("an attacker trying unknown credentials and bad signatures is refused past the limit, with Retry-After, even with a right answer", async () => {
    const owner = await adaWithPasskey();
    expect(await passkeyAnswer(new SoftwareAuthenticator(), ATTACKER)).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(await passkeyAnswer(owner, ATTACKER, { o: { rpId: "evil.example" } })).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(await errorOf(await passkeyAnswer(new SoftwareAuthenticator(), ATTACKER, { json: true }))).toBe("WebAuthnVerificationError");
    const refused = await passkeyAnswer(new SoftwareAuthenticator(), ATTACKER);
    expect(refused).toHaveErrorRedirect("RateLimited");
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(800);
    expect(refused).not.toHaveSessionCookie();
    // Refused before anything is checked: a right answer from that client signs nobody in either.
    const right = await passkeyAnswer(owner, ATTACKER);
    expect(right).toHaveErrorRedirect("RateLimited");
    expect(right).not.toHaveSessionCookie();
    // The JSON client gets the same refusal as {url}, with Retry-After.
    const json = await passkeyAnswer(new SoftwareAuthenticator(), ATTACKER, { json: true });
    expect(json.status).toBe(200);
    expect(await errorOf(json)).toBe("RateLimited");
    expect(Number(json.headers.get("Retry-After"))).toBeGreaterThan(800);
    expect(await testDb().authEvent.count({ where: { type: "rate-limited" } })).toBeGreaterThanOrEqual(1);
    // The owner, on another client, is not locked out by the attacker's failures.
    expect(await passkeyAnswer(owner, OWNER)).toHaveSessionCookie();
  });

  it("an owner signing in with the passkey again and again is never counted", async () => {
    const owner = await adaWithPasskey();
    for (let i = 0; i < 6; i++) expect(await passkeyAnswer(owner, OWNER, { json: i % 2 === 1 })).toHaveSessionCookie();
    // Two honest mistakes after that are still answered as mistakes, not as a limit.
    expect(await passkeyAnswer(owner, OWNER, { o: { uv: false } })).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(await passkeyAnswer(owner, OWNER, { o: { uv: false } })).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(await passkeyAnswer(owner, OWNER)).toHaveSessionCookie();
  });
});
