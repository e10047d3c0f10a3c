// The session JWE must be interchangeable with Auth.js v5's: proven against @auth/core/jwt itself.
import { decode as authjsDecode, encode as authjsEncode } from "@auth/core/jwt";
import { describe, expect, it } from "vitest";
import { hkdfSync } from "node:crypto";
import { EncryptJWT } from "jose";
import { decodeJwt, encodeJwt, openJwt, resealJwt, tryDecodeJwt } from "../../../app/auth/core/jwt.server";

const secret = "jwt-test-secret-0123456789abcdef0123456789abcdef";
const salt = "authjs.session-token";
const claims = { name: "Ada", email: "ada@example.com", picture: null, sub: "user-1" };

describe("session JWE", () => {
  it("decodes a token minted by @auth/core/jwt encode", async () => {
    const token = await authjsEncode({ token: claims, secret, salt, maxAge: 3600 });
    const payload = await decodeJwt({ token, secrets: [secret], salt });
    expect(payload).toMatchObject(claims);
    expect(payload.exp! - payload.iat!).toBe(3600);
  });

  it("mints a token that @auth/core/jwt decode accepts", async () => {
    const token = await encodeJwt({ payload: claims, secrets: [secret], salt, maxAge: 2592000 });
    const header = JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString());
    expect(header).toMatchObject({ alg: "dir", enc: "A256CBC-HS512" });
    expect(header.kid).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    const payload = await authjsDecode({ token, secret, salt });
    expect(payload).toMatchObject(claims);
    expect(typeof payload!.jti).toBe("string");
    expect(payload!.exp! - payload!.iat!).toBe(2592000);
  });

  it("agrees with Auth.js on the key id, so rotated secrets pick the right key", async () => {
    const mine = await encodeJwt({ payload: claims, secrets: [secret], salt, maxAge: 60 });
    const theirs = await authjsEncode({ token: claims, secret, salt, maxAge: 60 });
    const kid = (t: string) => JSON.parse(Buffer.from(t.split(".")[0]!, "base64url").toString()).kid;
    expect(kid(mine)).toBe(kid(theirs));
    const rotated = await decodeJwt({ token: theirs, secrets: ["new-secret-0123456789abcdef0123456789abcdef", secret], salt });
    expect(rotated.sub).toBe("user-1");
  });

  it("rejects another salt (cookie name), another secret, a tampered or truncated token", async () => {
    const token = await encodeJwt({ payload: claims, secrets: [secret], salt, maxAge: 60 });
    expect(await tryDecodeJwt({ token, secrets: [secret], salt: "__Secure-authjs.session-token" })).toBeNull();
    expect(await tryDecodeJwt({ token, secrets: ["x".repeat(40)], salt })).toBeNull();
    const parts = token.split(".");
    const flipped = parts[3]!.startsWith("A") ? "B" + parts[3]!.slice(1) : "A" + parts[3]!.slice(1);
    expect(await tryDecodeJwt({ token: [...parts.slice(0, 3), flipped, parts[4]].join("."), secrets: [secret], salt })).toBeNull();
    expect(await tryDecodeJwt({ token: token.slice(0, -10), secrets: [secret], salt })).toBeNull();
    expect(await tryDecodeJwt({ token: "not-a-jwe", secrets: [secret], salt })).toBeNull();
  });

  it("honours expiry with a 15 s clock tolerance", async () => {
    const now = new Date("2026-01-01T00:00:00Z");
    const token = await encodeJwt({ payload: claims, secrets: [secret], salt, maxAge: 60, now });
    const at = (s: number) => new Date(now.getTime() + s * 1000);
    expect(await tryDecodeJwt({ token, secrets: [secret], salt, now: at(74) })).not.toBeNull();
    expect(await tryDecodeJwt({ token, secrets: [secret], salt, now: at(76) })).toBeNull();
  });

  it("still reads A256GCM tokens (the other enc Auth.js decodes) and refuses a future nbf", async () => {
    const key = new Uint8Array(hkdfSync("sha256", secret, salt, `Auth.js Generated Encryption Key (${salt})`, 32));
    const gcm = await new EncryptJWT(claims).setProtectedHeader({ alg: "dir", enc: "A256GCM" }).setIssuedAt().setExpirationTime("1h").encrypt(key);
    expect((await decodeJwt({ token: gcm, secrets: [secret], salt })).sub).toBe("user-1");
    const future = await encodeJwt({ payload: { ...claims, nbf: Math.floor(Date.now() / 1000) + 3600 }, secrets: [secret], salt, maxAge: 7200 });
    expect(await tryDecodeJwt({ token: future, secrets: [secret], salt })).toBeNull();
  });

  it("rejects a token whose tag does not match even when the key id does", async () => {
    const token = await encodeJwt({ payload: claims, secrets: [secret], salt, maxAge: 60 });
    const parts = token.split(".");
    const tag = Buffer.from(parts[4]!, "base64url");
    tag[0] = tag[0]! ^ 1;
    parts[4] = tag.toString("base64url");
    await expect(decodeJwt({ token: parts.join("."), secrets: [secret], salt })).rejects.toThrow();
  });

  it("tries every rotated secret for a token without a key id", async () => {
    const older = "older-secret-0123456789abcdef0123456789abcdef";
    const key = new Uint8Array(hkdfSync("sha256", older, salt, `Auth.js Generated Encryption Key (${salt})`, 64));
    const noKid = await new EncryptJWT(claims).setProtectedHeader({ alg: "dir", enc: "A256CBC-HS512" }).setIssuedAt().setExpirationTime("1h").encrypt(key);
    expect((await decodeJwt({ token: noKid, secrets: [secret, older], salt })).sub).toBe("user-1");
    expect(await tryDecodeJwt({ token: noKid, secrets: [secret], salt })).toBeNull();
  });
});

describe("claims remembered for a session cookie sent again and again", () => {
  it("answers the same claims, checks the expiry again at each use, and never remembers a refused token", async () => {
    const secrets = [secret];
    const now = new Date();
    const token = await encodeJwt({ payload: claims, secrets, salt, maxAge: 60, now });
    const first = await decodeJwt({ token, secrets, salt, now, remember: true });
    const again = await decodeJwt({ token, secrets, salt, now, remember: true });
    expect(again).toBe(first);
    expect(Object.isFrozen(again)).toBe(true);
    // Past exp + 15 s tolerance: refused although it was remembered.
    expect(await tryDecodeJwt({ token, secrets, salt, now: new Date(now.getTime() + 76_000), remember: true })).toBeNull();
    // Another salt (another cookie) or other secrets never share what was remembered.
    expect(await tryDecodeJwt({ token, secrets, salt: "authjs.state", now, remember: true })).toBeNull();
    expect(await tryDecodeJwt({ token, secrets: ["another-secret-0123456789abcdef0123456789"], salt, now, remember: true })).toBeNull();
    // A tampered token is refused every time, never remembered as valid.
    const tampered = token.slice(0, -2) + (token.endsWith("A") ? "BB" : "AA");
    for (let i = 0; i < 2; i++) expect(await tryDecodeJwt({ token: tampered, secrets, salt, now, remember: true })).toBeNull();
    // Without remember, every call decrypts on its own and returns claims of its own.
    const own = await decodeJwt({ token, secrets, salt, now });
    expect(own).not.toBe(first);
    expect(own).toEqual(first);
  });
});

describe("rotation: which secret opened a token, and sealing it again (ADR 109)", () => {
  const older = "jwt-test-older-secret-0123456789abcdef01234567";

  it("says which secret opened a token, and the re-sealed token has the same claims under the first secret alone", async () => {
    const token = await encodeJwt({ payload: claims, secrets: [older], salt, maxAge: 600 });
    const opened = await openJwt({ token, secrets: [secret, older], salt });
    expect("keyIndex" in opened && opened.keyIndex).toBe(1);
    if (!("payload" in opened)) throw new Error("refused");
    const again = await resealJwt({ payload: opened.payload, secrets: [secret, older], salt });
    const reopened = await openJwt({ token: again, secrets: [secret], salt });
    expect(reopened).toEqual({ payload: opened.payload, keyIndex: 0 });
    // The same iat, exp and jti: nothing about it is newer or longer-lived.
    expect(Object.keys(opened.payload)).toEqual(expect.arrayContaining(["iat", "exp", "jti"]));
    // Remembered answers keep saying which secret opened them.
    expect(await openJwt({ token, secrets: [secret, older], salt, remember: true })).toMatchObject({ keyIndex: 1 });
    expect(await openJwt({ token, secrets: [secret, older], salt, remember: true })).toMatchObject({ keyIndex: 1 });
  });

  it("names why a token is refused: malformed, no-key, expired, invalid", async () => {
    expect(await openJwt({ token: "garbage", secrets: [secret], salt })).toEqual({ refused: "malformed" });
    const token = await encodeJwt({ payload: claims, secrets: [older], salt, maxAge: 600 });
    expect(await openJwt({ token, secrets: [secret], salt })).toEqual({ refused: "no-key" });
    expect(await openJwt({ token: token.slice(0, -4), secrets: [older], salt })).toMatchObject({ refused: expect.stringMatching(/malformed|no-key/) });
    const expired = await encodeJwt({ payload: claims, secrets: [secret], salt, maxAge: 1, now: new Date(Date.now() - 60_000) });
    expect(await openJwt({ token: expired, secrets: [secret], salt, clockTolerance: 0 })).toEqual({ refused: "expired" });
    const future = await encodeJwt({ payload: { ...claims, nbf: Math.floor(Date.now() / 1000) + 3600 }, secrets: [secret], salt, maxAge: 7200 });
    expect(await openJwt({ token: future, secrets: [secret], salt })).toEqual({ refused: "invalid" });
  });
});
