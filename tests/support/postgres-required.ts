// For suites that need PostgreSQL itself (several servers on one database, database faults): in CI
// (CI=true) an unreachable server fails the run; on a developer's machine the suite is skipped
// with the reason printed.
import pg from "pg";
import { ADMIN_URL, describeServer } from "./postgres";

/** null when PostgreSQL answers; otherwise why not (and the suite skips), or a throw in CI. */
export async function postgresUnreachable(suite: string): Promise<string | null> {
  const probe = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3_000 });
  probe.on("error", () => {});
  try {
    await probe.connect();
    await probe.end();
    return null;
  } catch (e) {
    await probe.end().catch(() => {});
    const reason = `PostgreSQL at ${describeServer(ADMIN_URL)} unreachable (${e instanceof Error ? e.message : String(e)})`;
    if (process.env.CI === "true") throw new Error(`${reason}; CI requires it for the ${suite}`);
    console.log(`${reason}: ${suite} skipped`);
    return reason;
  }
}
