// The second factor's pure parts: RFC 6238 codes (the RFC's own SHA-1 test vectors), the ±1 step
// window, the otpauth URI, the QR matrix, recovery codes, the keyed hashes, the sealing at rest,
// and the policy of which sign-ins it covers.
import { describe, expect, it } from "vitest";
import { keyedHashes, openAtRest, sealAtRest } from "../../../app/auth/core/sealed-at-rest.server";
import { factorsOf, needsSecondFactor, withSecondFactor } from "../../../app/auth/two-factor/policy.server";
import {
  generateRecoveryCodes,
  hashRecoveryCode,
  legacyRecoveryCodeHashes,
  normalizeRecoveryCode,
  RECOVERY_CODE_LENGTH,
  recoveryCodeMatches,
  storedTagPrefix,
} from "../../../app/auth/two-factor/recovery-codes.server";
import { generateTotpSecret, matchTotpStep, otpauthUri, qrCodePath, totpCodeAt, totpStep } from "../../../app/auth/two-factor/totp.server";

// RFC 6238 appendix B: the ASCII secret "12345678901234567890", SHA-1, 8 digits; ours are the
// last six digits of the same HOTP values.
const RFC_SECRET = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
const RFC_VECTORS: [number, string][] = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"],
];

describe("TOTP", () => {
  it.each(RFC_VECTORS)("at %i s the code is the last six digits of the RFC's %s", (seconds, eight) => {
    expect(totpCodeAt(RFC_SECRET, totpStep(new Date(seconds * 1000)))).toBe(eight.slice(2));
  });

  it("accepts the steps before, at and after now, and names the step; refuses ±2 and malformed codes", () => {
    const now = new Date(1_700_000_015_000);
    const step = totpStep(now);
    for (const delta of [-1, 0, 1]) expect(matchTotpStep(RFC_SECRET, totpCodeAt(RFC_SECRET, step + delta), now)).toBe(step + delta);
    for (const delta of [-2, 2]) expect(matchTotpStep(RFC_SECRET, totpCodeAt(RFC_SECRET, step + delta), now)).toBeNull();
    for (const bad of ["", "12345", "1234567", "12345a", " 123456", "١٢٣٤٥٦"]) expect(matchTotpStep(RFC_SECRET, bad, now)).toBeNull();
  });

  it("makes 160-bit base32 secrets, different every time", () => {
    const a = generateTotpSecret();
    expect(a).toMatch(/^[A-Z2-7]{32}$/);
    expect(generateTotpSecret()).not.toBe(a);
  });

  it("builds the otpauth URI apps scan, and a QR matrix as one SVG path", () => {
    const uri = otpauthUri(RFC_SECRET, "ada@example.com");
    expect(uri).toBe(`otpauth://totp/Vestibule:ada%40example.com?issuer=Vestibule&secret=${RFC_SECRET}&algorithm=SHA1&digits=6&period=30`);
    const qr = qrCodePath(uri);
    expect(qr.size).toBeGreaterThan(29);
    expect(qr.path).toMatch(/^(M\d+ \d+h1v1h-1z)+$/);
    // The quiet zone (4 modules) is left white.
    expect(qr.path).not.toMatch(/M[0-3] /);
  });
});

describe("recovery codes", () => {
  it("are ten distinct codes of 16 base32 characters (80 random bits), shown as xxxx-xxxx-xxxx-xxxx", () => {
    const codes = generateRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[0-9a-hjkmnp-tv-z]{4}(?:-[0-9a-hjkmnp-tv-z]{4}){3}$/);
    // 32 symbols = 5 bits each; the clear lookup tag's 2 characters aside, 70 secret bits remain.
    expect((RECOVERY_CODE_LENGTH - 2) * Math.log2(32)).toBeGreaterThanOrEqual(64);
  });

  it("read forgivingly: case, spaces, hyphens and the look-alikes i, l, o; the 10-character codes of ADR 044 too", () => {
    expect(normalizeRecoveryCode("ABCD-EFGH-1JKM-NPQR")).toEqual({ format: "current", code: "abcdefgh1jkmnpqr" });
    expect(normalizeRecoveryCode(" abcdefgh ijkm npqr ")).toEqual({ format: "current", code: "abcdefgh1jkmnpqr" });
    expect(normalizeRecoveryCode("ABCDE-FGH1J")).toEqual({ format: "legacy", code: "abcdefgh1j" });
    expect(normalizeRecoveryCode("0o1il-23456")).toEqual({ format: "legacy", code: "00111" + "23456" });
    for (const bad of ["", "abcd-efgh", "abcde-fghijk", "abcde-fghu!", "abcde_fghij", "abcd-efgh-jkmn-pqr", "abcd-efgh-jkmn-pqrst"]) {
      expect(normalizeRecoveryCode(bad)).toBeNull();
    }
  });

  it("are stored as a salted Argon2id hash behind a clear 2-character tag, never as the code or an HMAC", async () => {
    const stored = await hashRecoveryCode("abcdefgh1jkmnpqr");
    expect(stored.startsWith(storedTagPrefix("abcdefgh1jkmnpqr"))).toBe(true);
    expect(stored).toMatch(/^r2:ab:\$argon2id\$/);
    expect(stored).not.toContain("cdefgh1jkmnpqr");
    expect(await hashRecoveryCode("abcdefgh1jkmnpqr")).not.toBe(stored);
    expect(await recoveryCodeMatches(stored, "abcdefgh1jkmnpqr")).toBe(true);
    expect(await recoveryCodeMatches(stored, "abcdefgh1jkmnpqs")).toBe(false);
    expect(await recoveryCodeMatches(null, "abcdefgh1jkmnpqr")).toBe(false);
  });

  it("ADR 044's codes are still recognised by their keyed hashes, bound to the user, one per configured secret", () => {
    const secrets = ["a".repeat(32), "b".repeat(32)];
    const [first, second] = legacyRecoveryCodeHashes("user-1", "abcdefgh1j", secrets);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(second).not.toBe(first);
    expect(legacyRecoveryCodeHashes("user-2", "abcdefgh1j", secrets)[0]).not.toBe(first);
    expect(keyedHashes("x", "p", [secrets[0]!, secrets[0]!])).toHaveLength(1);
  });
});

describe("sealing at rest", () => {
  const at = { purpose: "vestibule.test", row: "user-1" };
  it("opens under any configured secret, never for another row or purpose", async () => {
    const sealed = await sealAtRest("JBSWY3DPEHPK3PXP", at, ["old".repeat(11)]);
    expect(sealed).not.toContain("JBSWY3DPEHPK3PXP");
    expect(await openAtRest(sealed, at, ["new".repeat(11), "old".repeat(11)])).toBe("JBSWY3DPEHPK3PXP");
    expect(await openAtRest(sealed, { ...at, row: "user-2" }, ["old".repeat(11)])).toBeNull();
    expect(await openAtRest(sealed, { ...at, purpose: "other" }, ["old".repeat(11)])).toBeNull();
    expect(await openAtRest(sealed, at, ["new".repeat(11)])).toBeNull();
    expect(await openAtRest("not a jwe", at, ["old".repeat(11)])).toBeNull();
  });
});

describe("the policy", () => {
  it("covers every single-factor method and exempts passkeys", () => {
    for (const type of ["credentials", "email", "oauth", "oidc", "some-future-type"]) expect(needsSecondFactor(type)).toBe(true);
    expect(needsSecondFactor("webauthn")).toBe(false);
    expect(factorsOf("credentials")).toEqual(["pwd"]);
    expect(factorsOf("oidc")).toEqual(["fed"]);
    expect(factorsOf("webauthn")).toEqual(["hwk", "mfa"]);
    expect(withSecondFactor("email", "totp")).toEqual(["email", "otp", "mfa"]);
    expect(withSecondFactor("pwd", "recovery")).toEqual(["pwd", "rcv", "mfa"]);
  });
});
