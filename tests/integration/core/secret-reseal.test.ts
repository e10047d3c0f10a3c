// ADR 109, "Values at rest": after AUTH_SECRET is rotated ("B,A"), a TOTP secret or an OAuth
// token sealed at rest with the old value is written back sealed with the new one when it is
// used, and `npm run secret:reseal` re-seals every remaining one — so an operator who then drops
// the old value ("B") breaks nobody's second factor. A value no configured secret opens is named
// by kind and row id, left as it is, and the command exits 1.
import { afterEach, describe, expect, it, vi } from "vitest";
import { openAtRest } from "../../../app/auth/core/sealed-at-rest.server.ts";
import { getAccessToken, openToken, sealToken } from "../../../app/auth/oauth/tokens.server.ts";
import { createUser, signIn, withEnv } from "../../support/auth.ts";
import { productionEnvFile, runNpm } from "../../support/cli.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, ORIGIN } from "../../support/http.ts";
import { accountIntent, codeAt, enrolled, firstFactor, submitCode, useStepClock } from "../two-factor/helpers.ts";

const A = "the-secret-before-rotation-0123456789abcdef";
const B = "the-secret-after-rotation-fedcba9876543210";
const UNKNOWN = "a-secret-this-deployment-never-had-000000";

let undo: (() => void)[] = [];
afterEach(() => {
  for (const u of undo.reverse()) u();
  undo = [];
  vi.useRealTimers();
});

function secrets(value: string, extra: Record<string, string> = {}) {
  undo.push(withEnv({ AUTH_SECRET: value, ...extra }));
}

const totpPlace = (userId: string) => ({ purpose: "vestibule.totp-secret", row: userId });

async function storedTotp(userId: string) {
  return (await testDb().twoFactorCredential.findUniqueOrThrow({ where: { userId } })).secretSealed;
}

/** Signs `email` in with the password and the authenticator's code; the answer's Location. */
async function signInWithTotp(email: string, secret: string) {
  const jar = new CookieJar();
  await firstFactor(jar, email);
  const res = await submitCode(jar, codeAt(secret));
  return res.headers.get("Location");
}

/** An OAuth account whose tokens were sealed (tokens.server.ts, as a sign-in stores them) under `secret`. */
async function providerAccount(userId: string, providerAccountId: string, secret: string) {
  const at = (field: "accessToken" | "refreshToken" | "idToken") => ({ provider: "github", providerAccountId, field });
  return testDb().account.create({
    data: {
      userId,
      type: "oauth",
      provider: "github",
      providerAccountId,
      accessToken: await sealToken(`access-${providerAccountId}`, at("accessToken"), [secret]),
      refreshToken: await sealToken(`refresh-${providerAccountId}`, at("refreshToken"), [secret]),
      idToken: await sealToken(`id-${providerAccountId}`, at("idToken"), [secret]),
      expiresAt: null,
    },
  });
}

const reseal = (list: string) => runNpm("secret:reseal", [], { VESTIBULE_ENV_FILE: productionEnvFile({ AUTH_SECRET: list }) });

describe.each(["jwt", "database"] as const)(`AUTH_SECRET rotation and values sealed at rest (${dbLabel}, %s sessions)`, (strategy) => {
  it("a TOTP user enrolled under the old secret signs in after the rotation and the stored secret comes back sealed with the new one", async () => {
    await resetDatabase();
    secrets(A, { AUTH_SESSION_STRATEGY: strategy });
    useStepClock();
    await createUser();
    const { secret, userId } = await enrolled();
    const before = await storedTotp(userId);
    expect(await openAtRest(before, totpPlace(userId), [B])).toBeNull();

    secrets(`${B},${A}`);
    expect(await signInWithTotp("ada@example.com", secret)).toBe(`${ORIGIN}/`);
    const after = await storedTotp(userId);
    expect(after).not.toBe(before);
    expect(await openAtRest(after, totpPlace(userId), [B])).toBe(secret);

    // The old value dropped: the factor still works.
    secrets(B);
    vi.setSystemTime(new Date(Date.now() + 30_000));
    expect(await signInWithTotp("ada@example.com", secret)).toBe(`${ORIGIN}/`);
  });
});

describe(`TOTP enrolment across a rotation (${dbLabel})`, () => {
  it("an enrolment started under the old secret is confirmed after the rotation, and the stored secret is sealed with the new one", async () => {
    await resetDatabase();
    secrets(A);
    useStepClock();
    const user = await createUser();
    const { jar } = await signIn(new CookieJar());
    const started = await accountIntent(jar, { intent: "totp-start" });
    const { totpSetup } = (await started.json()) as { totpSetup: { secret: string } };

    secrets(`${B},${A}`);
    const confirmed = await accountIntent(jar, { intent: "totp-confirm", code: codeAt(totpSetup.secret) });
    expect(confirmed.status).toBe(200);
    expect(((await confirmed.json()) as { recoveryCodes?: string[] }).recoveryCodes).toHaveLength(10);
    const row = await testDb().twoFactorCredential.findUniqueOrThrow({ where: { userId: user.id } });
    expect(row.confirmedAt).not.toBeNull();
    expect(await openAtRest(row.secretSealed, totpPlace(user.id), [B])).toBe(totpSetup.secret);
  });
});

describe(`npm run secret:reseal (${dbLabel})`, { timeout: 180_000 }, () => {
  it("a provider access token sealed with the old secret is re-sealed with the new one when the app reads it", async () => {
    await resetDatabase();
    secrets(A);
    const user = await createUser("kim@example.com", "Kim");
    const account = await providerAccount(user.id, "kim-1", A);
    secrets(`${B},${A}`);
    expect(await getAccessToken(user.id, "github")).toBe("access-kim-1");
    const row = await testDb().account.findUniqueOrThrow({ where: { id: account.id } });
    expect(await openToken(row.accessToken, { provider: "github", providerAccountId: "kim-1", field: "accessToken" }, [B])).toBe("access-kim-1");
  });

  it("an operator rotates, runs secret:reseal, drops the old value: TOTP and provider tokens still open; a second run finds everything current; an unknown key is named and exits 1", async () => {
    await resetDatabase();
    secrets(A, { AUTH_SESSION_STRATEGY: "database" });
    useStepClock();
    await createUser("ada@example.com", "Ada");
    await createUser("bob@example.com", "Bob");
    const ada = await enrolled("ada@example.com");
    const bob = await enrolled("bob@example.com");
    await providerAccount(ada.userId, "ada-1", A);

    // After the rotation Ada signs in (her secret is re-sealed then); Bob does not.
    secrets(`${B},${A}`);
    expect(await signInWithTotp("ada@example.com", ada.secret)).toBe(`${ORIGIN}/`);

    const first = await reseal(`${B},${A}`);
    expect(first.stderr).not.toContain("failed");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("totp-secret: 1 re-sealed, 1 already current, 0 unopenable");
    expect(first.stdout).toContain("oauth-access-token: 1 re-sealed, 0 already current, 0 unopenable");
    expect(first.stdout).toContain("oauth-refresh-token: 1 re-sealed, 0 already current, 0 unopenable");
    expect(first.stdout).toContain("oauth-id-token: 1 re-sealed, 0 already current, 0 unopenable");
    const events = await testDb().authEvent.findMany({ where: { type: "secrets-resealed" } });
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.detail!)).toMatchObject({ source: "cli", kinds: { "totp-secret": { resealed: 1, current: 1, unopenable: 0 } } });

    // Only the new value now: Bob, who never signed in between, still passes his second factor.
    secrets(B);
    vi.setSystemTime(new Date(Date.now() + 30_000));
    expect(await signInWithTotp("bob@example.com", bob.secret)).toBe(`${ORIGIN}/`);
    const account = await testDb().account.findFirstOrThrow({ where: { providerAccountId: "ada-1" } });
    for (const field of ["accessToken", "refreshToken", "idToken"] as const) {
      expect(await openToken(account[field], { provider: "github", providerAccountId: "ada-1", field }, [B])).toBe(`${field.replace("Token", "")}-ada-1`);
    }

    const second = await reseal(B);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("totp-secret: 0 re-sealed, 2 already current, 0 unopenable");
    expect(second.stdout).toContain("oauth-access-token: 0 re-sealed, 1 already current, 0 unopenable");

    // A row sealed with a key this deployment does not have: named, left alone, exit 1.
    const carol = await createUser("carol@example.com", "Carol");
    const stray = await providerAccount(carol.id, "carol-1", UNKNOWN);
    const before = await testDb().account.findMany({ orderBy: { id: "asc" } });
    const beforeTotp = await testDb().twoFactorCredential.findMany({ orderBy: { id: "asc" } });
    const third = await reseal(B);
    expect(third.code).toBe(1);
    expect(third.stdout).toContain("oauth-access-token: 0 re-sealed, 1 already current, 1 unopenable");
    expect(third.stdout).toContain(`oauth-access-token ${stray.id}`);
    expect(third.stdout).toContain(`oauth-refresh-token ${stray.id}`);
    expect(third.stdout).not.toContain("access-carol-1");
    expect(third.stdout).not.toContain(stray.accessToken!);
    expect(await testDb().account.findMany({ orderBy: { id: "asc" } })).toEqual(before);
    expect(await testDb().twoFactorCredential.findMany({ orderBy: { id: "asc" } })).toEqual(beforeTotp);
  });
});
