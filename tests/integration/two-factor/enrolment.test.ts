// Turning the second factor on and off from /account: totp-start shows the
// secret and its QR code, totp-confirm turns it on with a first code computed from that secret and
// shows ten recovery codes once (stored only as salted hashes, ADR 074), totp-disable and recovery-codes
// need a current code, and a POST without its CSRF token changes nothing.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { signIn, createUser } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get } from "../../support/http.ts";
import * as account from "../../../app/routes/account.tsx";
import { withEnv } from "../../support/auth.ts";
import { accountIntent, accountPage, advance, codeAt, enrol, firstFactor, isRefusal, SESSION, submitCode, useStepClock } from "./helpers.ts";

beforeEach(async () => {
  await resetDatabase();
  await createUser();
  useStepClock();
});
afterEach(() => {
  vi.useRealTimers();
});

type Setup = { secret: string; uri: string; qr: { size: number; path: string } };

async function start(jar: CookieJar) {
  const res = await accountIntent(jar, { intent: "totp-start" });
  return { res, body: (await res.json()) as { totpSetup: Setup | null; formError: string | null } };
}

describe(`enrolment (${dbLabel})`, () => {
  it("totp-start shows a base32 secret, its otpauth URI (issuer, the user's e-mail) and a QR code; nothing is on yet", async () => {
    const { jar } = await signIn();
    const { res, body } = await start(jar);
    expect(res.status).toBe(200);
    const setup = body.totpSetup!;
    expect(setup.secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(setup.uri);
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.host).toBe("totp");
    expect(decodeURIComponent(uri.pathname)).toBe("/Vestibule:ada@example.com");
    expect(uri.searchParams.get("secret")).toBe(setup.secret);
    expect(uri.searchParams.get("issuer")).toBe("Vestibule");
    expect(uri.searchParams.get("digits")).toBe("6");
    expect(uri.searchParams.get("period")).toBe("30");
    expect(setup.qr.size).toBeGreaterThanOrEqual(21 + 8);
    expect(setup.qr.path).toMatch(/^(M\d+ \d+h1v1h-1z)+$/);
    expect((await accountPage(jar)).twoFactor).toEqual({ enabled: false, recoveryCodesLeft: 0 });
    // The pending secret is sealed at rest, never stored as typed into the app.
    const row = await testDb().twoFactorCredential.findFirstOrThrow();
    expect(row.confirmedAt).toBeNull();
    expect(row.secretSealed).not.toContain(setup.secret);
    expect(row.secretSealed.split(".")).toHaveLength(5);
    // Not on: the next password sign-in gets its session at once.
    const again = await firstFactor(new CookieJar());
    expect(again).toHaveSessionCookie();
  });

  it("a wrong first code keeps it off and sends a browser back to the page, which says so and shows the same setup again", async () => {
    const { jar } = await signIn();
    const { body } = await start(jar);
    const wrong = codeAt(body.totpSetup!.secret, 3);
    const res = await accountIntent(jar, { intent: "totp-confirm", code: wrong });
    expect(res.status).toBe(303);
    const location = res.headers.get("Location")!;
    expect(location).toBe("/account?refused=setupCodeWrong&intent=totp-confirm#two-factor-notice");
    expect(location).not.toContain(wrong);
    const page = await callRoute(account.loader, get(location, { jar }));
    const shown = (await page.json()) as { refusal: { section: string; message: string; totpSetup: Setup | null }; twoFactor: { enabled: boolean } };
    expect(shown.refusal.section).toBe("two-factor");
    expect(shown.refusal.message).toMatch(/did not match/);
    expect(shown.refusal.totpSetup?.secret).toBe(body.totpSetup!.secret);
    expect(shown.twoFactor.enabled).toBe(false);
    expect(await testDb().recoveryCode.count()).toBe(0);
    // The next, right, code turns it on; the refusal's address (Back) then shows neither set-up nor refusal.
    expect((await accountIntent(jar, { intent: "totp-confirm", code: codeAt(body.totpSetup!.secret) })).status).toBe(200);
    const after = (await (await callRoute(account.loader, get(location, { jar }))).json()) as { refusal: unknown };
    expect(after.refusal).toBeNull();
  });

  it("a JSON client's wrong first code keeps the form's answer (400, error for the code field)", async () => {
    const { jar } = await signIn();
    const { body } = await start(jar);
    const res = await accountIntent(jar, { intent: "totp-confirm", code: codeAt(body.totpSetup!.secret, 3), json: "true" });
    expect(res.status).toBe(400);
    const refused = (await res.json()) as { fieldErrors: { code?: string }; totpSetup: Setup | null };
    expect(refused.fieldErrors.code).toMatch(/did not match/);
    expect(refused.totpSetup?.secret).toBe(body.totpSetup!.secret);
  });

  it("totp-confirm turns it on and shows 10 recovery codes once; the database holds only their salted hashes", async () => {
    const { jar } = await signIn();
    const { body } = await start(jar);
    const code = codeAt(body.totpSetup!.secret);
    const res = await accountIntent(jar, { intent: "totp-confirm", code });
    expect(res.status).toBe(200);
    const { recoveryCodes } = (await res.json()) as { recoveryCodes: string[] };
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    for (const c of recoveryCodes) expect(c).toMatch(/^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}$/);
    const rows = await testDb().recoveryCode.findMany();
    expect(rows).toHaveLength(10);
    const stored = JSON.stringify(rows);
    for (const c of recoveryCodes) {
      expect(stored).not.toContain(c);
      expect(stored).not.toContain(c.replace(/-/g, "").slice(2));
    }
    for (const r of rows) expect(r.hash).toMatch(/^r2:[0-9a-hjkmnp-tv-z]{2}:\$argon2id\$/);
    expect((await accountPage(jar)).twoFactor).toEqual({ enabled: true, recoveryCodesLeft: 10 });
    // Shown once: the page itself never carries them, and the same confirmation again is refused.
    expect(JSON.stringify(await accountPage(jar))).not.toContain(recoveryCodes[0]);
    const again = await accountIntent(jar, { intent: "totp-confirm", code });
    expect(again.status).toBe(409);
    expect(JSON.stringify(await again.json())).not.toContain(recoveryCodes[0]);
    const events = await testDb().authEvent.findMany({ where: { type: "two-factor-enabled" } });
    expect(events).toHaveLength(1);
    expect(events[0]!.detail).not.toContain(code);
  });

  it("a visitor with an Arabic keyboard confirms the authenticator with the code in Arabic-Indic digits: it turns on", async () => {
    const { jar } = await signIn();
    const { body } = await start(jar);
    const code = codeAt(body.totpSetup!.secret).replace(/[0-9]/g, (d) => String.fromCodePoint(0x0660 + Number(d)));
    const res = await accountIntent(jar, { intent: "totp-confirm", code });
    expect(res.status).toBe(200);
    expect((await accountPage(jar)).twoFactor).toEqual({ enabled: true, recoveryCodesLeft: 10 });
  });

  it("totp-start while it is on is refused and changes nothing", async () => {
    const { jar, secret } = await enrol();
    const before = await testDb().twoFactorCredential.findFirstOrThrow();
    const { res } = await start(jar);
    expect(res.status).toBe(409);
    const after = await testDb().twoFactorCredential.findFirstOrThrow();
    expect(after.secretSealed).toBe(before.secretSealed);
    expect(after.confirmedAt).not.toBeNull();
    // The same authenticator app still works.
    const browser = new CookieJar();
    await firstFactor(browser);
    expect(await submitCode(browser, codeAt(secret))).toHaveSessionCookie();
  });

  it("totp-disable needs a current code: a wrong or missing one is refused, a right one turns it off", async () => {
    const { jar, secret, userId } = await enrol();
    for (const code of ["", "000000", "not-a-code", codeAt(secret, 5)]) {
      // A browser is sent back to the section, the refusal named (never the code typed).
      const res = await accountIntent(jar, { intent: "totp-disable", code });
      expect(res.status, code).toBe(303);
      expect(res.headers.get("Location")).toBe("/account?refused=codeWrong&intent=totp-disable#two-factor-notice");
    }
    expect((await accountPage(jar)).twoFactor.enabled).toBe(true);
    // The page the address names says why, in the section.
    const page = (await (await callRoute(account.loader, get("/account?refused=codeWrong&intent=totp-disable", { jar }))).json()) as { refusal: { section: string; message: string } };
    expect(page.refusal).toMatchObject({ section: "two-factor", message: expect.stringMatching(/\S/) });
    const res = await accountIntent(jar, { intent: "totp-disable", code: codeAt(secret) });
    expect(res).toHaveRedirect("/account?updated=two-factor-off#two-factor-notice");
    expect(await testDb().twoFactorCredential.count({ where: { userId } })).toBe(0);
    expect(await testDb().recoveryCode.count({ where: { userId } })).toBe(0);
    expect(await testDb().authEvent.count({ where: { type: "two-factor-disabled", userId } })).toBe(1);
    expect(await testDb().authEvent.count({ where: { type: "two-factor-failed", userId } })).toBe(4);
    // Off: a password alone signs in again.
    expect(await firstFactor(new CookieJar())).toHaveSessionCookie();
  });

  it("totp-disable also takes an unused recovery code", async () => {
    const { jar, recoveryCodes } = await enrol();
    const res = await accountIntent(jar, { intent: "totp-disable", code: recoveryCodes[3]!.toUpperCase() });
    expect(res).toHaveRedirect("/account?updated=two-factor-off#two-factor-notice");
  });

  it("recovery-codes with a current code replaces all ten; the old ones stop working", async () => {
    const { jar, secret, recoveryCodes } = await enrol();
    expect((await accountIntent(jar, { intent: "recovery-codes", code: "123456" })).headers.get("Location")).toBe("/account?refused=codeWrong&intent=recovery-codes#two-factor-notice");
    const res = await accountIntent(jar, { intent: "recovery-codes", code: codeAt(secret) });
    expect(res.status).toBe(200);
    const fresh = ((await res.json()) as { recoveryCodes: string[] }).recoveryCodes;
    expect(fresh).toHaveLength(10);
    expect(fresh.some((c) => recoveryCodes.includes(c))).toBe(false);
    expect(await testDb().recoveryCode.count()).toBe(10);
    const browser = new CookieJar();
    await firstFactor(browser);
    expect(isRefusal(await submitCode(browser, recoveryCodes[0]!))).toBe(true);
    expect(await submitCode(browser, fresh[0]!)).toHaveSessionCookie();
  });

  it("a POST without its CSRF token changes nothing (start, confirm, disable, replace)", async () => {
    const { jar } = await signIn();
    expect((await accountIntent(jar, { intent: "totp-start" }, { csrf: false })).status).toBe(403);
    expect(await testDb().twoFactorCredential.count()).toBe(0);
    const { body } = await start(jar);
    const code = codeAt(body.totpSetup!.secret);
    expect((await accountIntent(jar, { intent: "totp-confirm", code }, { csrf: false })).status).toBe(403);
    expect((await testDb().twoFactorCredential.findFirstOrThrow()).confirmedAt).toBeNull();
    expect((await accountIntent(jar, { intent: "totp-confirm", code })).status).toBe(200);
    advance(30);
    const next = codeAt(body.totpSetup!.secret);
    expect((await accountIntent(jar, { intent: "totp-disable", code: next }, { csrf: false })).status).toBe(403);
    expect((await accountIntent(jar, { intent: "recovery-codes", code: next }, { csrf: false })).status).toBe(403);
    expect((await accountPage(jar)).twoFactor).toEqual({ enabled: true, recoveryCodesLeft: 10 });
    // The code the refused POSTs carried was not used up.
    expect(await accountIntent(jar, { intent: "totp-disable", code: next })).toHaveRedirect("/account?updated=two-factor-off#two-factor-notice");
  });

  it("survives a secret rotation: the sealed secret and the recovery-code hashes open under the old secret kept second", async () => {
    const { secret, recoveryCodes } = await enrol();
    const original = process.env.AUTH_SECRET!;
    const undo = withEnv({ AUTH_SECRET: `${"n".repeat(40)},${original}` });
    try {
      const browser = new CookieJar();
      await firstFactor(browser);
      expect(await submitCode(browser, codeAt(secret))).toHaveSessionCookie();
      const other = new CookieJar();
      await firstFactor(other);
      expect(await submitCode(other, recoveryCodes[1]!)).toHaveSessionCookie();
    } finally {
      undo();
    }
  });

  it("the honest owner: a session jar signed in before keeps working after turning it on", async () => {
    const { jar } = await enrol();
    expect(jar.get(SESSION)).toBeTruthy();
    expect((await accountPage(jar)).twoFactor.enabled).toBe(true);
  });
});
