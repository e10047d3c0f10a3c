// Recovery codes at ASVS 5.0 level 2 / NIST 800-63B-4 (ADR 074): 16 base32
// characters (80 bits, 70 of them secret), stored as a salted Argon2id hash — never the code, never
// a keyed hash a copy of the database plus AUTH_SECRET could search fast; ADR 044's 10-character
// codes still work once each until replaced; after one is used the sign-in lands on /account,
// which says how many are left and links to the form for new ones.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { legacyRecoveryCodeHashes } from "../../../app/auth/two-factor/recovery-codes.server.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get } from "../../support/http.ts";
import * as account from "../../../app/routes/account.tsx";
import { accountIntent, accountPage, codeAt, enrol, firstFactor, isRefusal, SESSION, submitCode, useStepClock } from "./helpers.ts";
import { TEST_AUTH_SECRET as TEST_SECRET } from "../../support/env.ts";

beforeEach(async () => {
  await resetDatabase();
  await createUser();
  useStepClock();
});
afterEach(() => {
  vi.useRealTimers();
});

type RecoveryNotice = { left: number; continueTo: string | null } | null;

async function recoveryNotice(jar: CookieJar, location: string): Promise<RecoveryNotice> {
  const url = new URL(location);
  const res = await callRoute(account.loader, get(`${url.pathname}${url.search}`, { jar }));
  return ((await res.json()) as { recoveryCodeUsed: RecoveryNotice }).recoveryCodeUsed;
}

describe(`recovery codes (${dbLabel})`, () => {
  it("a new code has 16 base32 characters, shown in groups of four; the database holds neither it nor an HMAC of it", async () => {
    const { recoveryCodes, userId } = await enrol();
    expect(recoveryCodes).toHaveLength(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}$/);
    const rows = await testDb().recoveryCode.findMany({ where: { userId } });
    expect(rows).toHaveLength(10);
    const stored = rows.map((r) => r.hash).join("\n");
    for (const code of recoveryCodes) {
      const canonical = code.replace(/-/g, "");
      expect(stored).not.toContain(canonical.slice(2));
      expect(rows.map((r) => r.hash)).not.toContain(legacyRecoveryCodeHashes(userId, canonical, [TEST_SECRET])[0]);
    }
    for (const row of rows) expect(row.hash).toMatch(/^r2:[0-9a-hjkmnp-tv-z]{2}:\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it("a code typed without hyphens and in capitals signs in once; the page says 9 are left and offers new ones; the next sign-in cannot reuse it", async () => {
    const { recoveryCodes } = await enrol();
    const jar = new CookieJar();
    await firstFactor(jar, "ada@example.com", { callbackUrl: "/welcome" });
    const res = await submitCode(jar, recoveryCodes[0]!.replace(/-/g, "").toUpperCase());
    expect(res).toHaveSessionCookie();
    const location = res.headers.get("Location")!;
    const url = new URL(location);
    expect(url.pathname).toBe("/account");
    expect(url.searchParams.get("updated")).toBe("recovery-code-used");
    expect(await recoveryNotice(jar, location)).toEqual({ left: 9, continueTo: "/welcome" });
    expect((await accountPage(jar)).twoFactor.recoveryCodesLeft).toBe(9);

    const again = new CookieJar();
    await firstFactor(again);
    const reused = await submitCode(again, recoveryCodes[0]!);
    expect(isRefusal(reused)).toBe(true);
    expect(again.get(SESSION)).toBeUndefined();
  });

  it("JSON mode gets the same /account URL; a sign-in already going to /account carries no onward link", async () => {
    const { recoveryCodes } = await enrol();
    const jar = new CookieJar();
    await firstFactor(jar, "ada@example.com", { callbackUrl: "/account" });
    const res = await submitCode(jar, recoveryCodes[1]!, { json: true });
    expect(res.status).toBe(200);
    const { url } = (await res.json()) as { url: string };
    expect(new URL(url).searchParams.get("updated")).toBe("recovery-code-used");
    expect(new URL(url).searchParams.get("callbackUrl")).toBeNull();
    expect(await recoveryNotice(jar, url)).toEqual({ left: 9, continueTo: null });
  });

  it("a forged notice link cannot send the user to another site, and shows nothing to a user without the second factor", async () => {
    const { recoveryCodes } = await enrol();
    const jar = new CookieJar();
    await firstFactor(jar);
    await submitCode(jar, recoveryCodes[2]!);
    expect(await recoveryNotice(jar, "http://localhost:3000/account?updated=recovery-code-used&callbackUrl=https://evil.example/")).toEqual({ left: 9, continueTo: null });
    await createUser("grace@example.com", "Grace");
    const { jar: grace } = await signIn(new CookieJar(), "grace@example.com");
    expect(await recoveryNotice(grace, "http://localhost:3000/account?updated=recovery-code-used")).toBeNull();
  });

  it("a legacy 10-character code (ADR 044's keyed hash) still signs in, once", async () => {
    const { userId } = await enrol();
    // The codes an account enrolled before this change holds.
    const legacy = ["abcde-fgh1j", "kmnpq-rstvw"];
    await testDb().recoveryCode.deleteMany({ where: { userId } });
    await testDb().recoveryCode.createMany({
      data: legacy.map((code) => ({ userId, hash: legacyRecoveryCodeHashes(userId, code.replace("-", ""), [TEST_SECRET])[0]! })),
    });
    const jar = new CookieJar();
    await firstFactor(jar);
    const res = await submitCode(jar, "ABCDE FGH1J");
    expect(res).toHaveSessionCookie();
    expect(await recoveryNotice(jar, res.headers.get("Location")!)).toEqual({ left: 1, continueTo: "/" });

    const again = new CookieJar();
    await firstFactor(again);
    expect(isRefusal(await submitCode(again, "abcde-fgh1j"))).toBe(true);
    expect(again.get(SESSION)).toBeUndefined();
  });

  it("replacing the codes from /account (a current code) writes ten of the new format", async () => {
    const { jar, secret, userId } = await enrol();
    const res = await accountIntent(jar, { intent: "recovery-codes", code: codeAt(secret) });
    expect(res.status).toBe(200);
    const { recoveryCodes } = (await res.json()) as { recoveryCodes: string[] };
    expect(recoveryCodes.every((c) => c.replace(/-/g, "").length === 16)).toBe(true);
    const rows = await testDb().recoveryCode.findMany({ where: { userId } });
    expect(rows.every((r) => r.hash.startsWith("r2:"))).toBe(true);
  });
});
