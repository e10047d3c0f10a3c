// Development start-up: every sign-in method works offline on a fresh clone.
import { getConfig } from "../auth/core/config.server";
import { upsertCredentialsUser } from "../auth/credentials/users.server";
import { assertEngineSafe } from "../auth/provider/engine.server";
import { db } from "../db/client.server";
import { migrate } from "../db/migrate.server";
import { idpDevStep } from "./idp-step.server";
import { mailDevStep } from "../mail/dev-step.server";

export const DEMO_USER = { email: "demo@vestibule.dev", password: "vestibule-demo", name: "Demo User" } as const;

/** Each step registers what it starts; steps added by other modules run after the database is ready. */
export const devSteps: ((print: (line: string) => void) => Promise<void>)[] = [];
devSteps.push(idpDevStep);
devSteps.push(mailDevStep);

let started: Promise<void> | null = null;

export function bootstrapDev(print: (line: string) => void) {
  started ??= (async () => {
    const config = getConfig();
    const { applied } = await migrate({ log: () => {} });
    print(`[vestibule] database: ${config.databaseUrl ? "PostgreSQL (DATABASE_URL)" : `SQLite ${config.dataDir}/vestibule.db`}${applied.length ? `, applied ${applied.length} migration(s)` : ""}`);
    if (config.credentials) {
      const existing = await db().user.findUnique({ where: { email: DEMO_USER.email }, select: { id: true } });
      if (!existing) await upsertCredentialsUser(DEMO_USER);
      print(`[vestibule] demo user: ${DEMO_USER.email} / password: ${DEMO_USER.password}`);
    }
    for (const step of devSteps) await step(print);
    // The OAuth provider never runs with the library's development shortcuts (ADR 133).
    await assertEngineSafe();
    if (config.provider) print(`[vestibule] OAuth provider on: issuer ${config.provider.issuer}`);
    print(`[vestibule] session strategy: ${config.sessionStrategy}; sign in at /auth/signin`);
  })();
  return started;
}
