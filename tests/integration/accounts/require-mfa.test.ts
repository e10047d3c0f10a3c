// AUTH_REQUIRE_MFA=true (docs/decisions/082): a user without a second factor
// who signs in is sent to set one up before any other page answers; sign-out, the set-up forms,
// the auth endpoints and the language menu still work; JSON clients get a code they can act on.
// Sent through React Router's own request handler, so the root middleware runs as in production.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import { totpCodeAt, totpStep } from "../../../app/auth/two-factor/totp.server.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, ORIGIN } from "../../support/http.ts";
import { envPerTest, useAppHandler } from "../../support/per-test.ts";

const handle = useAppHandler();

const setEnv = envPerTest();
afterEach(() => {
  vi.useRealTimers();
  resetRevocations();
});

async function send(jar: CookieJar, path: string, { body, headers = {} }: { body?: Record<string, string>; headers?: Record<string, string> } = {}) {
  const res = await handle(
    new Request(ORIGIN + path, {
      method: body ? "POST" : "GET",
      headers: {
        Cookie: jar.header(),
        Origin: ORIGIN,
        ...(body ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
        ...headers,
      },
      body: body ? new URLSearchParams(body) : undefined,
    }),
  );
  jar.apply(res);
  return res;
}

async function csrf(jar: CookieJar): Promise<string> {
  return ((await (await send(jar, "/auth/csrf")).json()) as { csrfToken: string }).csrfToken;
}

describe.each(["jwt", "database"] as const)(`AUTH_REQUIRE_MFA=true, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(async () => {
    await resetDatabase();
    resetRevocations();
    setEnv({ AUTH_SESSION_STRATEGY: strategy, AUTH_REQUIRE_MFA: "true", AUTH_ASSURANCE: undefined });
    await createUser();
  });

  it("a user who signs in with only a password is sent to set up a second factor before the home page answers", async () => {
    const { jar } = await signIn();
    for (const page of ["/", "/welcome", "/account/email", "/_root.data"]) {
      const res = await send(jar, page);
      expect(res.status, page).toBe(page.endsWith(".data") ? 202 : 302);
      // A .data request (JavaScript navigation) gets React Router's redirect in its body.
      const where = res.headers.get("Location") ?? (await res.text());
      expect(where, page).toContain("/account");
    }
    const account = await send(jar, "/account");
    expect(account.status).toBe(200);
    const html = await account.text();
    expect(html).toContain('id="second-factor-required"');
    // Only the set-up: no profile form, no session list.
    expect(html).not.toContain('id="profile-form"');
    expect(html).toContain('name="intent" value="totp-start"');
  });

  it("a JSON client gets 403 SecondFactorSetupRequired with the set-up page's URL", async () => {
    const { jar } = await signIn();
    const res = await send(jar, "/", { headers: { "X-Auth-Return-Redirect": "1" } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: "SecondFactorSetupRequired", url: `${ORIGIN}/account` });
    const token = await csrf(jar);
    const posted = await send(jar, "/account", { body: { csrfToken: token, intent: "revoke-all", json: "true" } });
    expect(posted.status).toBe(403);
    expect(((await posted.json()) as { error: string }).error).toBe("SecondFactorSetupRequired");
  });

  it("every /account change but the set-up is refused and changes nothing; sign-out and the language menu still answer", async () => {
    const { jar } = await signIn();
    const token = await csrf(jar);
    const renamed = await send(jar, "/account", { body: { csrfToken: token, intent: "update-profile", name: "Mallory" } });
    expect(renamed.status).toBe(302);
    expect(renamed.headers.get("Location")).toBe(`${ORIGIN}/account`);
    expect((await testDb().user.findFirstOrThrow()).name).toBe("Ada");

    const language = await send(jar, "/language", { body: { lang: "de", returnTo: "/account" } });
    expect(language.status).toBe(303);
    expect(language.headers.get("Set-Cookie")).toMatch(/^lang=de/);

    const out = await send(jar, "/auth/signout", { body: { csrfToken: token } });
    expect(out.status).toBe(302);
    expect((await (await send(jar, "/auth/session")).json()) as unknown).toBeNull();
  });

  it("a gated user renames themselves through POST /auth/session (the client's update()): refused with the set-up code, nothing changes; GET /auth/session still answers", async () => {
    const { jar } = await signIn();
    const token = await csrf(jar);
    const res = await handle(
      new Request(`${ORIGIN}/auth/session`, {
        method: "POST",
        headers: { Cookie: jar.header(), Origin: ORIGIN, "Content-Type": "application/json" },
        body: JSON.stringify({ csrfToken: token, data: { name: "Mallory" } }),
      }),
    );
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: "SecondFactorSetupRequired", url: `${ORIGIN}/account` });
    expect((await testDb().user.findFirstOrThrow()).name).toBe("Ada");
    const session = (await (await send(jar, "/auth/session")).json()) as { user: { name: string } } | null;
    expect(session?.user.name).toBe("Ada");
  });

  it("setting TOTP up from /account opens every page", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-11-26T10:00:05Z") });
    const { jar } = await signIn();
    const token = await csrf(jar);
    const started = await send(jar, "/account", { body: { csrfToken: token, intent: "totp-start" } });
    expect(started.status).toBe(200);
    const secret = /data-totp-secret="([A-Z2-7]+)"/.exec(await started.text())?.[1];
    expect(secret).toBeTruthy();
    const confirmed = await send(jar, "/account", { body: { csrfToken: token, intent: "totp-confirm", code: totpCodeAt(secret!, totpStep(new Date())) } });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain("data-recovery-code");
    const home = await send(jar, "/");
    expect(home.status).toBe(200);
    await home.body?.cancel();
  });

  it("a user who has a passkey is not held at the set-up page", async () => {
    const user = await testDb().user.findFirstOrThrow();
    await testDb().passkey.create({
      data: { userId: user.id, credentialId: "cred-1", publicKey: "pk", counter: 0n, deviceType: "singleDevice", name: "Passkey" },
    });
    const { jar } = await signIn();
    const home = await send(jar, "/");
    expect(home.status).toBe(200);
    await home.body?.cancel();
  });

  it("signed-out visitors see the home page as before", async () => {
    const home = await send(new CookieJar(), "/");
    expect(home.status).toBe(200);
    await home.body?.cancel();
  });
});

describe(`the enrolment gate's defaults (${dbLabel})`, () => {
  beforeEach(async () => {
    await resetDatabase();
    resetRevocations();
    await createUser();
  });

  it("aal2 holds a user without a second factor at the set-up page; AUTH_REQUIRE_MFA=false wins; aal1 does not", async () => {
    setEnv({ AUTH_ASSURANCE: "aal2", AUTH_REQUIRE_MFA: undefined });
    const held = await send((await signIn()).jar, "/");
    expect(held.status).toBe(302);
    setEnv({ AUTH_ASSURANCE: "aal2", AUTH_REQUIRE_MFA: "false" });
    const free = await send((await signIn()).jar, "/");
    expect(free.status).toBe(200);
    await free.body?.cancel();
    setEnv({ AUTH_ASSURANCE: undefined, AUTH_REQUIRE_MFA: undefined });
    const aal1 = await send((await signIn()).jar, "/");
    expect(aal1.status).toBe(200);
    await aal1.body?.cancel();
  });
});
