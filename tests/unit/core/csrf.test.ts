import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { csrfTokenFromCookie, ensureCsrfToken, verifyCsrf } from "../../../app/auth/core/csrf.server";
import { parseCookieHeader } from "../../../app/auth/core/cookies.server";
import { requestFor, SECRET, testConfig } from "../support";

const hash = (token: string, secret = SECRET) => createHash("sha256").update(token + secret).digest("hex");

describe("CSRF double-submit token", () => {
  it("mints 32 random bytes as 64 hex with a cookie <token>|sha256(token+secret)", () => {
    const { token, setCookie } = ensureCsrfToken(requestFor("http://localhost/auth/csrf"));
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const value = parseCookieHeader(setCookie!.split(";")[0]!).get("authjs.csrf-token");
    expect(value).toBe(`${token}|${hash(token)}`);
  });

  it("reuses a valid cookie and sets no new one", () => {
    const token = "a".repeat(64);
    const ar = requestFor("http://localhost/auth/csrf", { cookies: { "authjs.csrf-token": `${token}|${hash(token)}` } });
    expect(ensureCsrfToken(ar)).toEqual({ token, setCookie: null });
  });

  it("replaces a forged cookie (hash made with another secret)", () => {
    const token = "b".repeat(64);
    const ar = requestFor("http://localhost/auth/csrf", { cookies: { "authjs.csrf-token": `${token}|${hash(token, "other-secret-other-secret-other-secret")}` } });
    const minted = ensureCsrfToken(ar);
    expect(minted.token).not.toBe(token);
    expect(minted.setCookie).toMatch(/^authjs\.csrf-token=/);
  });

  it("verifies only an exact match with a valid cookie", () => {
    const token = "c".repeat(64);
    const ar = requestFor("http://localhost/x", { cookies: { "authjs.csrf-token": `${token}|${hash(token)}` } });
    expect(verifyCsrf(ar, token)).toBe(true);
    expect(verifyCsrf(ar, "d".repeat(64))).toBe(false);
    expect(verifyCsrf(ar, token.toUpperCase())).toBe(false);
    expect(verifyCsrf(ar, undefined)).toBe(false);
    expect(verifyCsrf(ar, [token])).toBe(false);
    expect(verifyCsrf(requestFor("http://localhost/x"), token)).toBe(false);
  });

  it("accepts cookies made with any rotated secret and mints with the first", () => {
    const old = "old-secret-0123456789abcdef0123456789abcdef";
    const config = testConfig({ AUTH_SECRET: `new-secret-0123456789abcdef0123456789abcdef,${old}` });
    const token = "e".repeat(64);
    const ar = requestFor("http://localhost/x", { cookies: { "authjs.csrf-token": `${token}|${hash(token, old)}` } }, config);
    expect(csrfTokenFromCookie(ar)).toBe(token);
    const fresh = ensureCsrfToken(requestFor("http://localhost/x", {}, config));
    const value = parseCookieHeader(fresh.setCookie!.split(";")[0]!).get("authjs.csrf-token")!;
    expect(value.split("|")[1]).toBe(hash(fresh.token, "new-secret-0123456789abcdef0123456789abcdef"));
  });

  it("uses the __Host- cookie on https", () => {
    const config = testConfig({ AUTH_URL: "https://app.example.com" });
    const { setCookie } = ensureCsrfToken(requestFor("https://app.example.com/auth/csrf", {}, config));
    expect(setCookie).toMatch(/^__Host-authjs\.csrf-token=.*; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
  });

  it("reads a cookie whose hash has as many characters but more bytes than a real one as invalid", () => {
    // 63 hex digits and one "é": 64 characters, 65 UTF-8 bytes.
    const token = "f".repeat(64);
    const cookies = { "authjs.csrf-token": `${token}|${"0".repeat(63)}é` };
    expect(csrfTokenFromCookie(requestFor("http://localhost/auth/csrf", { cookies }))).toBeNull();
    expect(verifyCsrf(requestFor("http://localhost/x", { cookies }), token)).toBe(false);
    const minted = ensureCsrfToken(requestFor("http://localhost/auth/csrf", { cookies }));
    expect(minted.token).not.toBe(token);
    expect(minted.setCookie).toMatch(/^authjs\.csrf-token=/);
  });
});
