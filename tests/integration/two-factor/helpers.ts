// Shared steps of the second-factor tests: sign in with a password, turn TOTP on from /account
// through the real route module (the code computed from the secret the page shows, as an
// authenticator app would), and answer the second-factor page.
import { expect, vi } from "vitest";
import { eventSource, recordEvent } from "../../../app/auth/accounts/audit.server.ts";
import { notifySecurityChange } from "../../../app/auth/accounts/security-notices.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { generateRecoveryCodes, hashRecoveryCode, normalizeRecoveryCode } from "../../../app/auth/two-factor/recovery-codes.server.ts";
import { totpCodeAt, totpStep } from "../../../app/auth/two-factor/totp.server.ts";
import * as account from "../../../app/routes/account.tsx";
import * as twoFactorRoute from "../../../app/routes/auth/two-factor.tsx";
import { signIn } from "../../support/auth.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";

export const PENDING = "authjs.two-factor";
export const SESSION = "authjs.session-token";

/** Only Date is faked: the clock moves in whole TOTP steps, database I/O keeps its real timers. */
export function useStepClock() {
  vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-11-25T12:00:05Z") });
}

/** Moves the faked clock on by `seconds`. */
export function advance(seconds: number) {
  vi.setSystemTime(new Date(Date.now() + seconds * 1000));
}

/** The authenticator app's code for now, `offset` steps away. */
export function codeAt(secret: string, offset = 0): string {
  return totpCodeAt(secret, totpStep(new Date()) + offset);
}

export async function accountPage(jar: CookieJar) {
  const res = await callRoute(account.loader, get("/account", { jar }));
  jar.apply(res);
  return (await res.json()) as { csrfToken: string; twoFactor: { enabled: boolean; recoveryCodesLeft: number } };
}

export async function accountIntent(jar: CookieJar, fields: Record<string, string>, { csrf = true } = {}) {
  const csrfToken = csrf ? await fetchCsrf(jar) : undefined;
  const res = await callRoute(account.action, post("/account", { ...(csrfToken ? { csrfToken } : {}), ...fields }, { jar }));
  jar.apply(res);
  return res;
}

export type Enrolled = { jar: CookieJar; secret: string; recoveryCodes: string[]; userId: string };

/** Signs `email` in with the password and starts TOTP from /account: the jar and the secret shown. */
async function signInAndStartTotp(email: string): Promise<{ jar: CookieJar; totpSetup: { secret: string } }> {
  const { jar, res } = await signIn(new CookieJar(), email);
  expect(res).toHaveSessionCookie();
  const started = await accountIntent(jar, { intent: "totp-start" });
  expect(started.status).toBe(200);
  const { totpSetup } = (await started.json()) as { totpSetup: { secret: string } };
  return { jar, totpSetup };
}

/** Signs `email` in with the password and turns TOTP on; the clock then moves to the next step. */
export async function enrol(email = "ada@example.com"): Promise<Enrolled> {
  const { jar, totpSetup } = await signInAndStartTotp(email);
  const confirmed = await accountIntent(jar, { intent: "totp-confirm", code: codeAt(totpSetup.secret) });
  expect(confirmed.status).toBe(200);
  const { recoveryCodes } = (await confirmed.json()) as { recoveryCodes: string[] };
  const { testDb } = await import("../../support/db.ts");
  const user = await testDb().user.findUniqueOrThrow({ where: { email } });
  // The enrolment code's step is used up: sign-ins in these tests use later steps.
  advance(30);
  return { jar, secret: totpSetup.secret, recoveryCodes, userId: user.id };
}

/**
 * Recovery codes per address, generated and hashed (production Argon2id, the stored format of
 * totp-confirm) once per test file: ten hashes cost about 0.35 s of CPU, and most tests that turn
 * the factor on are about what comes after. One set per address, so two accounts never share a
 * code. docs/decisions/088-test-suite-time.md
 */
const presetCodes = new Map<string, Promise<{ codes: string[]; stored: string[] }>>();

function recoveryCodesFor(email: string) {
  let preset = presetCodes.get(email);
  if (!preset) {
    preset = (async () => {
      const codes = generateRecoveryCodes();
      const stored: string[] = [];
      for (const code of codes) stored.push(await hashRecoveryCode(normalizeRecoveryCode(code)!.code));
      return { codes, stored };
    })();
    presetCodes.set(email, preset);
  }
  return preset;
}

/**
 * `enrol` for tests that are NOT about enrolment: the same password sign-in and real totp-start
 * (the secret sealed by the app), then what a successful totp-confirm leaves behind written
 * directly: the credential confirmed with the enrolment step used, the file's preset recovery
 * codes for `email`, the `two-factor-enabled` audit event and the "second factor on" notice.
 * The enrolment tests (enrolment, recovery-codes, security-notices) keep `enrol`, the real path.
 */
export async function enrolled(email = "ada@example.com"): Promise<Enrolled> {
  const { jar, totpSetup } = await signInAndStartTotp(email);
  const { codes, stored } = await recoveryCodesFor(email);
  const { testDb } = await import("../../support/db.ts");
  const db = testDb();
  const user = await db.user.findUniqueOrThrow({ where: { email } });
  const now = new Date();
  await db.$transaction([
    db.twoFactorCredential.update({ where: { userId: user.id }, data: { confirmedAt: now, lastUsedStep: totpStep(now) } }),
    db.recoveryCode.deleteMany({ where: { userId: user.id } }),
    db.recoveryCode.createMany({ data: stored.map((hash) => ({ userId: user.id, hash })) }),
  ]);
  const ar = authRequest(get("/account", { jar }));
  await recordEvent("two-factor-enabled", { userId: user.id, ...eventSource(ar), detail: { kind: "totp" } });
  await notifySecurityChange(ar, user.id, { kind: "second-factor-on" });
  advance(30);
  return { jar, secret: totpSetup.secret, recoveryCodes: [...codes], userId: user.id };
}

/** A password sign-in in `jar` (first factor only, for a TOTP user). */
export async function firstFactor(jar: CookieJar, email = "ada@example.com", extra: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const csrfToken = await fetchCsrf(jar);
  const callback = await import("../../../app/routes/auth/callback.ts");
  const res = await callRoute(
    callback.action,
    post("/auth/callback/credentials", { csrfToken, email, password: (await import("../../support/auth.ts")).PASSWORD, ...extra }, { jar, headers }),
    { provider: "credentials" },
  );
  jar.apply(res);
  return res;
}

/** POST /auth/two-factor with the jar's CSRF token (or none) and `code`. */
export async function submitCode(jar: CookieJar, code: string, { csrf = true, json = false, headers = {} as Record<string, string> } = {}) {
  const csrfToken = csrf ? await fetchCsrf(jar) : undefined;
  const body: Record<string, string> = { code };
  if (csrfToken) body.csrfToken = csrfToken;
  if (json) body.json = "true";
  const res = await callRoute(twoFactorRoute.action, post("/auth/two-factor", body, { jar, headers }));
  jar.apply(res);
  return res;
}

/** A refused code's answer (Post/Redirect/Get): a redirect back to /auth/two-factor, whose page says why. */
export function isRefusal(res: Response): boolean {
  const location = res.headers.get("Location");
  if (res.status !== 302 || location === null) return false;
  const url = new URL(location);
  return url.pathname === "/auth/two-factor" && url.searchParams.has("refused");
}

/** The text of the page a refused code's redirect leads to, as its loader answers in this browser. */
export async function refusalText(jar: CookieJar, res: Response): Promise<string> {
  expect(isRefusal(res)).toBe(true);
  const location = new URL(res.headers.get("Location")!);
  const page = await callRoute(twoFactorRoute.loader, get(location.pathname + location.search, { jar }));
  jar.apply(page);
  expect(page.status).toBe(200);
  return ((await page.json()) as { error: string }).error;
}

export async function twoFactorPage(jar: CookieJar) {
  const res = await callRoute(twoFactorRoute.loader, get("/auth/two-factor", { jar }));
  jar.apply(res);
  return res;
}

export const errorOf = (res: Response) => {
  const location = res.headers.get("Location");
  return location ? new URL(location).searchParams.get("error") : null;
};
