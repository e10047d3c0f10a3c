// Secrets at rest (TOTP secrets, OAuth provider tokens) are sealed by one function pair,
// app/auth/core/sealed-at-rest.server.ts. What earlier versions stored still opens: the two
// values below were sealed by the TOTP store's and the OAuth token store's own code before they
// shared this pair, and must open with it byte for byte as stored.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createCipheriv, hkdfSync, randomBytes } from "node:crypto";
import { CompactEncrypt, compactDecrypt, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import { openAtRest, sealAtRest } from "../../../app/auth/core/sealed-at-rest.server";
import { openToken, sealToken } from "../../../app/auth/oauth/tokens.server";

const SECRETS = ["fixture-secret-0123456789abcdef0123456789abcdef"];
const TOTP_SEALED_EARLIER =
  "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIiwia2lkIjoiLWFHM3prWjBITUt4WXBXT01acjlSOVBKM3FuQ2RfdDllenItRE1QUmg0ayIsInZzdC5iaW5kIjoia1NwQ3U1QmRMUjlQdGxuV3Fud3NJTHFXQVRxRlBtZWg3elFTX3JwRHU2VSJ9..3ThkSbVwiSlsUQca.MgLKbOODk-24B4lAcedDLg.CUNT_92BzwAfQclun1ybYA";
const TOKEN_SEALED_EARLIER =
  "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIiwia2lkIjoib3FlWldTNFc3am5LbEl6SHByTEMwV3FJaWNqa3NCczJUSGhVX0kxVmprWSIsInZzdC5iaW5kIjoiM29aMmROcE9CXzNoRjFUdTVxMjNIdkg5YUFhc3R6bDBudlpCVVZyMk54NCJ9..xF1ZqZv8fVJRowu2.y0n0X5fPPA8Uid-qjHsl6Q.XGSSgTEfb6LghAGd0ef2GA";
const ALICE_ACCESS = { provider: "oidc", providerAccountId: "alice", field: "accessToken" } as const;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

describe("one sealing for secrets at rest", () => {
  it("a TOTP secret and an OAuth token stored by earlier versions still open", async () => {
    expect(await openAtRest(TOTP_SEALED_EARLIER, { purpose: "vestibule.totp-secret", row: "user-1" }, SECRETS)).toBe("JBSWY3DPEHPK3PXP");
    expect(await openToken(TOKEN_SEALED_EARLIER, ALICE_ACCESS, SECRETS)).toBe("access-token-xyz");
  });

  it("a sealed token copied to another account or column, or opened without its secret, opens to nothing", async () => {
    expect(await openToken(TOKEN_SEALED_EARLIER, { ...ALICE_ACCESS, providerAccountId: "mallory" }, SECRETS)).toBeNull();
    expect(await openToken(TOKEN_SEALED_EARLIER, { ...ALICE_ACCESS, field: "refreshToken" }, SECRETS)).toBeNull();
    expect(await openToken(TOKEN_SEALED_EARLIER, ALICE_ACCESS, ["another-secret-0123456789abcdef0123456789abcdef"])).toBeNull();
    expect(await openAtRest(TOTP_SEALED_EARLIER, { purpose: "vestibule.totp-secret", row: "user-2" }, SECRETS)).toBeNull();
    // A token is no TOTP secret and the other way round, even for a row spelled the same.
    expect(await openAtRest(TOKEN_SEALED_EARLIER, { purpose: "vestibule.totp-secret", row: "oidc\u0000alice\u0000accessToken" }, SECRETS)).toBeNull();
  });

  it("what is sealed now opens after a secret rotation (old secret kept second)", async () => {
    const sealed = await sealToken("refresh-1", ALICE_ACCESS, SECRETS);
    expect(await openToken(sealed, ALICE_ACCESS, ["new-secret-0123456789abcdef0123456789abcdef00", ...SECRETS])).toBe("refresh-1");
    const totp = await sealAtRest("KRSXG5CTMVRXEZLU", { purpose: "vestibule.totp-secret", row: "user-9" }, SECRETS);
    expect(await openAtRest(totp, { purpose: "vestibule.totp-secret", row: "user-9" }, ["new-secret-0123456789abcdef0123456789abcdef00", ...SECRETS])).toBe("KRSXG5CTMVRXEZLU");
  });

  it("what is sealed is a standard compact JWE (dir, A256GCM) that any JOSE library opens with the derived key, a fresh IV each time", async () => {
    const at = { purpose: "oauth-refresh-answer", row: "jti-1" };
    const value = JSON.stringify({ access_token: "a".repeat(300), note: "ünïcode ✓" });
    const sealed = await sealAtRest(value, at, SECRETS);
    expect(decodeProtectedHeader(sealed)).toEqual({ alg: "dir", enc: "A256GCM", kid: expect.any(String), "vst.bind": expect.any(String) });
    const key = new Uint8Array(hkdfSync("sha256", SECRETS[0]!, at.purpose, `Vestibule sealing key (${at.purpose})`, 32));
    const { plaintext } = await compactDecrypt(sealed, key);
    expect(new TextDecoder().decode(plaintext)).toBe(value);
    const again = await sealAtRest(value, at, SECRETS);
    expect(again.split(".")[2]).not.toBe(sealed.split(".")[2]);
    expect(await openAtRest(again, at, SECRETS)).toBe(value);
    // A changed byte anywhere (header, IV, ciphertext, tag) opens to nothing.
    for (const part of [0, 2, 3, 4]) {
      const parts = sealed.split(".");
      const text = parts[part]!;
      parts[part] = text.slice(0, 5) + (text[5] === "A" ? "B" : "A") + text.slice(6);
      expect(await openAtRest(parts.join("."), at, SECRETS)).toBeNull();
    }
  });

  it("only what the sealing makes opens: another algorithm, a critical header, a wrapped key, a short tag or IV open to nothing", async () => {
    const at = { purpose: "oauth-refresh-answer", row: "jti-2" };
    const key = new Uint8Array(hkdfSync("sha256", SECRETS[0]!, at.purpose, `Vestibule sealing key (${at.purpose})`, 32));
    const good = await sealAtRest("value", at, SECRETS);
    const header = decodeProtectedHeader(good) as Record<string, string>;
    const made = (extra: Record<string, unknown>, k: Uint8Array = key, enc = "A256GCM") =>
      new CompactEncrypt(new TextEncoder().encode("value")).setProtectedHeader({ ...header, enc, ...extra } as never).encrypt(k);
    // The same header made by jose opens: the format is the standard one.
    expect(await openAtRest(await made({}), at, SECRETS)).toBe("value");
    expect(await openAtRest(await made({}, key.slice(0, 16), "A128GCM"), at, SECRETS)).toBeNull();
    // jose makes no JWE with a critical or a compression header: made by hand.
    const byHand = (extra: Record<string, unknown>) => {
      const h = Buffer.from(JSON.stringify({ ...header, ...extra })).toString("base64url");
      const iv = randomBytes(12);
      const c = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(h));
      const ct = Buffer.concat([c.update("value"), c.final()]);
      return [h, "", iv.toString("base64url"), ct.toString("base64url"), c.getAuthTag().toString("base64url")].join(".");
    };
    expect(await openAtRest(byHand({}), at, SECRETS)).toBe("value");
    expect(await openAtRest(byHand({ crit: ["vst.bind"] }), at, SECRETS)).toBeNull();
    expect(await openAtRest(byHand({ zip: "DEF" }), at, SECRETS)).toBeNull();
    expect(await openAtRest(byHand({ alg: "A256KW" }), at, SECRETS)).toBeNull();
    const [h, , iv, ct, tag] = good.split(".");
    expect(await openAtRest([h, "AAAA", iv, ct, tag].join("."), at, SECRETS)).toBeNull();
    expect(await openAtRest([h, "", iv, ct, tag!.slice(0, 10)].join("."), at, SECRETS)).toBeNull();
    expect(await openAtRest([h, "", iv!.slice(0, 8), ct, tag].join("."), at, SECRETS)).toBeNull();
    expect(await openAtRest([h, "", iv, ct].join("."), at, SECRETS)).toBeNull();
    expect(await openAtRest("not a jwe", at, SECRETS)).toBeNull();
  });

  it("no other module of the app encrypts a value at rest: only the sealing pair (and the cookie JWE) use a cipher", () => {
    const allowed = new Set(["app/auth/core/sealed-at-rest.server.ts", "app/auth/core/jwt.server.ts"]);
    const ciphers = /\b(CompactEncrypt|compactDecrypt|EncryptJWT|jwtDecrypt|createCipheriv|createDecipheriv|FlattenedEncrypt|GeneralEncrypt)\b/;
    const offenders = sourceFiles("app").filter((file) => !allowed.has(file) && ciphers.test(readFileSync(file, "utf8")));
    expect(offenders).toEqual([]);
  });
});
