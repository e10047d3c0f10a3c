// sessions_ended_total by reason (ADR 076, ADR 086): a password change, a deletion
// and expiry each count the sessions they ended, where they are recorded — the audit event's
// count, or (expiry, no audit event) whoever deletes the expired row: the session reader or the
// cleanup. A revoked row that later expires is not counted twice.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { deleteAccount } from "../../../app/auth/accounts/deletion.server.ts";
import { runCleanup } from "../../../app/auth/core/cleanup.server.ts";
import { metricsResponse, resetMetrics } from "../../../app/auth/core/metrics.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import { resetSessionCache } from "../../../app/auth/core/session-cache.server.ts";
import { accountDeletedHooks } from "../../../app/auth/signin/registry.server.ts";
import * as account from "../../../app/routes/account.tsx";
import { createUser, PASSWORD, signIn, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, ORIGIN, post } from "../../support/http.ts";
import { sessionOf } from "../../support/oauth-flow.ts";

const TOKEN = "metrics-token-for-sessions-ended-0123456789";

async function ended(): Promise<Record<string, number>> {
  const res = await metricsResponse(new Request(`${ORIGIN}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } }));
  const out: Record<string, number> = {};
  for (const line of (await res!.text()).split("\n")) {
    const m = /^vestibule_sessions_ended_total\{strategy="(\w+)",reason="([\w-]+)"\} (\d+)$/.exec(line);
    if (m) out[`${m[1]}/${m[2]}`] = Number(m[3]);
  }
  return out;
}

beforeEach(async () => {
  await resetDatabase();
  resetRevocations();
  resetSessionCache();
  resetMetrics();
});

describe.each(["jwt", "database"] as const)(`sessions ended, by reason, %s sessions (${dbLabel})`, (strategy) => {
  it("a password change counts the other sessions it ended; a deletion counts the user's sessions", async () => {
    const restore = withEnv({ AUTH_SESSION_STRATEGY: strategy, METRICS_TOKEN: TOKEN });
    try {
      const ada = await createUser("ada@example.com", "Ada");
      const { jar } = await signIn(new CookieJar());
      await signIn(new CookieJar());
      await signIn(new CookieJar());
      const page = await callRoute(account.loader, get("/account", { jar }));
      jar.apply(page);
      const { csrfToken } = (await page.json()) as { csrfToken: string };
      const changed = await callRoute(
        account.action,
        post("/account", { csrfToken, intent: "password-change", currentPassword: PASSWORD, password: "a quite different passphrase 42" }, { jar }),
      );
      expect(changed).toHaveRedirect("/account?updated=password-changed#password-notice");
      jar.apply(changed);
      expect(await ended()).toEqual({ [`${strategy}/password-change`]: 2 });

      await signIn(new CookieJar(), "ada@example.com", "a quite different passphrase 42");
      await deleteAccount(ada.id, { source: "cli" }, { hooks: accountDeletedHooks, ar: authRequest(get("/")) });
      expect(await ended()).toEqual({ [`${strategy}/password-change`]: 2, [`${strategy}/deleted`]: 2 });
    } finally {
      restore();
    }
  });

  it("expiry: counted once, by whoever deletes the expired row (the reader or the cleanup); a revoked row is not counted again", async () => {
    const restore = withEnv({ AUTH_SESSION_STRATEGY: strategy, METRICS_TOKEN: TOKEN });
    try {
      await createUser("ada@example.com", "Ada");
      const { jar } = await signIn(new CookieJar());
      await signIn(new CookieJar());
      const { jar: revoked } = await signIn(new CookieJar());
      // One ended by hand (its row stays, revoked, for jwt) before all three expire.
      const page = await callRoute(account.loader, get("/account", { jar: revoked }));
      revoked.apply(page);
      const { csrfToken } = (await page.json()) as { csrfToken: string };
      await callRoute(account.action, post("/account", { csrfToken, intent: "revoke-session", sessionId: (await testDb().session.findFirstOrThrow({ orderBy: { createdAt: "desc" } })).id }, { jar: revoked }));
      const before = await ended();
      expect(Object.values(before).reduce((a, b) => a + b, 0)).toBe(1);

      const later = new Date(Date.now() + 400 * 24 * 3600_000);
      if (strategy === "database") {
        // The reader finds one expired and deletes it; the cleanup the rest.
        vi.useFakeTimers({ toFake: ["Date"], now: later });
        try {
          expect(await sessionOf(jar)).toBeNull();
        } finally {
          vi.useRealTimers();
        }
        expect((await ended())["database/expired"]).toBe(1);
      }
      await runCleanup(later);
      expect(await ended()).toEqual({ ...before, [`${strategy}/expired`]: 2 });
    } finally {
      restore();
    }
  });
});
