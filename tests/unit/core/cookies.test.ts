import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CHUNK_SIZE,
  clearChunkedCookie,
  cookieNames,
  parseCookieHeader,
  readChunkedCookie,
  serializeCookie,
  writeChunkedCookie,
} from "../../../app/auth/core/cookies.server";

const names = (setCookies: string[]) => setCookies.map((c) => c.slice(0, c.indexOf("=")));
const isDeletion = (c: string) => /Max-Age=0/.test(c);

describe("cookie names", () => {
  it("uses authjs.* names, __Secure- on https and __Host- for the CSRF cookie", () => {
    expect(cookieNames(false).sessionToken).toBe("authjs.session-token");
    expect(cookieNames(true)).toMatchObject({
      sessionToken: "__Secure-authjs.session-token",
      csrfToken: "__Host-authjs.csrf-token",
      callbackUrl: "__Secure-authjs.callback-url",
      state: "__Secure-authjs.state",
      pkceCodeVerifier: "__Secure-authjs.pkce.code_verifier",
      nonce: "__Secure-authjs.nonce",
    });
  });

  it("serializes HttpOnly, SameSite=Lax, Path=/ and Secure only when asked", () => {
    expect(serializeCookie("a", "x|y", { secure: false })).toBe("a=x%7Cy; Path=/; HttpOnly; SameSite=Lax");
    expect(serializeCookie("a", "v", { secure: true, maxAge: 900 })).toBe("a=v; Max-Age=900; Path=/; HttpOnly; Secure; SameSite=Lax");
  });
});

describe("serializeCookie on any string", () => {
  /** Any UTF-16 string, lone surrogates (which JSON bodies can carry as \\ud800) included. */
  const anyUtf16 = fc.oneof(
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 }).map((units) => String.fromCharCode(...units)),
  );

  it("never throws, writes only cookie-safe characters, and reads back as the well-formed value", () => {
    fc.assert(
      fc.property(anyUtf16, (value) => {
        const header = serializeCookie("a", value, { secure: false });
        expect(header).toMatch(/^a=[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*; Path=\/; HttpOnly; SameSite=Lax$/);
        const written = header.slice(2, header.indexOf(";"));
        const wellFormed = (value as string & { toWellFormed(): string }).toWellFormed();
        expect(parseCookieHeader(`a=${written}`).get("a")).toBe(wellFormed);
      }),
      { numRuns: 500 },
    );
  });

  it.each([["\ud800"], ["x\udfffy"], ["a".repeat(253) + "\ud83d"]])("writes a lone surrogate as U+FFFD: %#", (value) => {
    expect(() => serializeCookie("a", value, { secure: false })).not.toThrow();
    expect(serializeCookie("a", value, { secure: false })).toContain("%EF%BF%BD");
  });
});

describe("parseCookieHeader", () => {
  it("decodes values, and reads a name sent more than once as absent", () => {
    const c = parseCookieHeader("a=1; b=x%7Cy; a=2; junk; c=");
    // A sibling subdomain can plant a second cookie of the same name, which the browser may send
    // first: neither copy can be trusted to be ours.
    expect(c.has("a")).toBe(false);
    expect(c.get("b")).toBe("x|y");
    expect(c.get("c")).toBe("");
    expect(c.has("junk")).toBe(false);
  });
  it.each([
    "authjs.session-token=attacker; authjs.session-token=victim",
    "authjs.session-token=victim; x=1; authjs.session-token=victim",
    "authjs.session-token=a;authjs.session-token=b;authjs.session-token=c",
    ' authjs.session-token = "a" ; authjs.session-token=a',
  ])("duplicated: %s", (header) => {
    expect(parseCookieHeader(header).has("authjs.session-token")).toBe(false);
  });

  it("survives a malformed escape", () => {
    expect(parseCookieHeader("a=%E0%A4%A").get("a")).toBe("%E0%A4%A");
  });
});

describe("chunking", () => {
  const base = "authjs.session-token";
  const empty = new Map<string, string>();

  it("writes one cookie while the whole Set-Cookie fits in 4096 bytes", () => {
    const out = writeChunkedCookie(empty, base, "x".repeat(3900), { secure: false });
    expect(names(out)).toEqual([base]);
    expect(Buffer.byteLength(out[0]!)).toBeLessThanOrEqual(4096);
  });

  it("splits a larger value into <name>.N pieces of at most 3933 characters that read back whole", () => {
    const value = "abcdefghij".repeat(1000);
    const out = writeChunkedCookie(empty, base, value, { secure: false });
    expect(names(out)).toEqual([`${base}.0`, `${base}.1`, `${base}.2`]);
    const jar = new Map<string, string>();
    for (const c of out) {
      const [pair] = c.split(";");
      const v = decodeURIComponent(pair!.slice(pair!.indexOf("=") + 1));
      expect(v.length).toBeLessThanOrEqual(CHUNK_SIZE);
      jar.set(pair!.slice(0, pair!.indexOf("=")), v);
    }
    expect(readChunkedCookie(jar, base)).toBe(value);
  });

  it("expires chunks that the new value no longer uses, and the plain cookie when moving to chunks", () => {
    const request = new Map([
      [`${base}.0`, "a"],
      [`${base}.1`, "b"],
      [`${base}.2`, "c"],
    ]);
    const out = writeChunkedCookie(request, base, "small", { secure: false });
    expect(out.filter(isDeletion).map((c) => c.split("=")[0])).toEqual([`${base}.0`, `${base}.1`, `${base}.2`]);
    expect(out.filter((c) => !isDeletion(c)).map((c) => c.split("=")[0])).toEqual([base]);

    const fromPlain = writeChunkedCookie(new Map([[base, "old"]]), base, "y".repeat(8000), { secure: false });
    expect(fromPlain.filter(isDeletion).map((c) => c.split("=")[0])).toEqual([base]);
    expect(fromPlain.filter((c) => !isDeletion(c))).toHaveLength(3);
  });

  it("reads a plain cookie beside a first chunk as absent: one of them was not written by us", () => {
    // Our own writes expire the plain cookie when they split a value and the chunks when they do
    // not, so a browser holds both only when someone else (a sibling subdomain) planted one.
    expect(readChunkedCookie(new Map([[base, "victim"], [`${base}.0`, "A"], [`${base}.1`, "B"]]), base)).toBeNull();
    expect(readChunkedCookie(new Map([[base, "victim"], [`${base}.0`, "A"]]), base)).toBeNull();
    // A stray later chunk with no first one is not a value: the plain cookie stands.
    expect(readChunkedCookie(new Map([[base, "plain"], [`${base}.1`, "B"]]), base)).toBe("plain");
  });

  it("reads chunks in numeric order and refuses a gap", () => {
    expect(readChunkedCookie(new Map([[`${base}.1`, "B"], [`${base}.0`, "A"], [`${base}.10`, "K"]]), base)).toBeNull();
    expect(readChunkedCookie(new Map([[`${base}.1`, "B"], [`${base}.0`, "A"]]), base)).toBe("AB");
    expect(readChunkedCookie(new Map([[`${base}.1`, "B"]]), base)).toBeNull();
    expect(readChunkedCookie(new Map([[`${base}-other`, "x"]]), base)).toBeNull();
  });

  it("clears every chunk the request carried", () => {
    const out = clearChunkedCookie(new Map([[`${base}.0`, "a"], [`${base}.1`, "b"], ["other", "x"]]), base, true);
    expect(out).toHaveLength(2);
    expect(out.every((c) => /Max-Age=0/.test(c) && /Secure/.test(c))).toBe(true);
  });
});
