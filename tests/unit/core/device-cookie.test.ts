import { describe, expect, it } from "vitest";
import { parseCookieHeader } from "../../../app/auth/core/cookies.server";
import { deviceCookieName, deviceIdFor, DEVICE_COOKIE_MAX_AGE, DEVICE_MAX_ACCOUNTS, issueDeviceCookie, readDevice } from "../../../app/auth/core/device-cookie.server";

const secrets = ["device-cookie-test-secret-0123456789abcdef"];

/** The Cookie header a browser would send back for this Set-Cookie. */
const sentBack = (setCookie: string) => parseCookieHeader(setCookie.split(";")[0]!);
const ctx = (cookies = new Map<string, string>(), secure = false) => ({ cookies, secure, secrets });

describe("device cookie", () => {
  it("is sealed, lasts a year and takes __Host- on https", async () => {
    const plain = await issueDeviceCookie(ctx(), "ada@example.com");
    expect(plain).toMatch(new RegExp(`^authjs\\.device=[^;]+; Max-Age=${DEVICE_COOKIE_MAX_AGE}; Path=/; HttpOnly; SameSite=Lax$`));
    expect(plain).not.toContain("ada");
    const secure = await issueDeviceCookie(ctx(new Map(), true), "ada@example.com");
    expect(secure).toMatch(/^__Host-authjs\.device=[^;]+; Max-Age=31536000; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    expect(deviceCookieName(true)).toBe("__Host-authjs.device");
  });

  it("names the accounts it was issued for, and keeps its device id across sign-ins", async () => {
    const first = sentBack(await issueDeviceCookie(ctx(), "ada@example.com"));
    const id = await deviceIdFor(ctx(first), "ada@example.com");
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(await deviceIdFor(ctx(first), "grace@example.com")).toBeNull();
    const second = sentBack(await issueDeviceCookie(ctx(first), "grace@example.com"));
    expect(await deviceIdFor(ctx(second), "grace@example.com")).toBe(id);
    expect(await deviceIdFor(ctx(second), "ada@example.com")).toBe(id);
  });

  it("remembers the most recent accounts only", async () => {
    let cookies = new Map<string, string>();
    for (let i = 0; i <= DEVICE_MAX_ACCOUNTS; i++) cookies = sentBack(await issueDeviceCookie(ctx(cookies), `u${i}@example.com`));
    expect((await readDevice(ctx(cookies)))!.accounts).toHaveLength(DEVICE_MAX_ACCOUNTS);
    expect(await deviceIdFor(ctx(cookies), "u0@example.com")).toBeNull();
    expect(await deviceIdFor(ctx(cookies), `u${DEVICE_MAX_ACCOUNTS}@example.com`)).not.toBeNull();
  });

  it("reads a forged, foreign, cross-scheme or garbage value as no device", async () => {
    const good = sentBack(await issueDeviceCookie(ctx(), "ada@example.com")).get("authjs.device")!;
    const cases = [
      new Map([["authjs.device", good.slice(0, -2) + (good.endsWith("A") ? "BB" : "AA")]]),
      new Map([["authjs.device", "x".repeat(5000)]]),
      new Map([["authjs.device", "a.b.c.d.e"]]),
      new Map([["authjs.device", "💥"]]),
    ];
    for (const cookies of cases) expect(await readDevice(ctx(cookies))).toBeNull();
    expect(await readDevice({ cookies: new Map([["authjs.device", good]]), secure: false, secrets: ["another-secret-of-enough-length-0123456789"] })).toBeNull();
    // Sealed under the plain name, it is not valid under the __Host- name.
    expect(await readDevice(ctx(new Map([["__Host-authjs.device", good]]), true))).toBeNull();
  });
});
