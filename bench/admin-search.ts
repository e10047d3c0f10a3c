// /admin's user search at 1 M users on PostgreSQL (ADR 085): `npx tsx bench/admin-search.ts`
// [--users N] [--runs R]. Not part of the test suite or of `npm run bench` (seeding takes minutes).
//
// A scratch database is migrated with the committed migrations, then filled with N users by
// INSERT … SELECT generate_series (names from a list with accents, ids in creation order as cuids
// are), the trigram indexes built after the load as a bulk import would. Each search is then run
// R times through the app's own function (searchUserPage: Prisma, the pool, the real SQL) and
// reported as p50/p95; the plans come from EXPLAIN (ANALYZE, BUFFERS). The same query with OFFSET
// instead of the keyset shows why the pages use a keyset.
import { parseArgs } from "node:util";
import pg from "pg";

const { values } = parseArgs({ options: { users: { type: "string", default: "1000000" }, runs: { type: "string", default: "15" } } });
const USERS = Number(values.users);
const RUNS = Number(values.runs);

const adminUrl = process.env.VESTIBULE_BENCH_PG_URL || "postgresql://postgres@127.0.0.1:5432/postgres";
const database = `vestibule_bench_admin_${process.pid}`;
const url = new URL(adminUrl);
url.pathname = `/${database}`;

const FIRST = ["José", "Jose", "JOSÉ", "Ana", "Zoë", "Renée", "Mohammed", "Łukasz", "Søren", "Chloé", "Ngozi", "Hiroshi", "Aylin", "François", "Björn", "Priya"];
const LAST = ["Núñez", "García", "Müller", "Lefèvre", "Kowalski", "Øster", "O'Brien", "Smith", "Nakamura", "Okafor", "Dubois", "Schröder", "Yılmaz", "Rossi", "Novák", "Svensson", "Fernández", "Haddad", "Kim", "Ivanova", "Andersen", "Costa", "Bianchi"];

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main() {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${database}"`);
  process.env.DATABASE_URL = url.href;
  process.env.VESTIBULE_LOG = "silent";
  const { migrate } = await import("../app/db/migrate.server.ts");
  const { closeDb } = await import("../app/db/client.server.ts");
  const { searchUserPage } = await import("../app/auth/accounts/admin.server.ts");
  const direct = new pg.Client({ connectionString: url.href });
  try {
    await migrate({ databaseUrl: url.href, log: () => {} });
    await direct.connect();
    const indexes = (await direct.query<{ indexname: string; indexdef: string }>(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'User' AND indexdef LIKE '%gin_trgm_ops%'`)).rows;
    for (const i of indexes) await direct.query(`DROP INDEX "${i.indexname}"`);

    let started = performance.now();
    // id: "c" + the row number in base 36, fixed width (creation order, as a cuid's time prefix).
    await direct.query(
      `INSERT INTO "User" (id, email, name, "nameSearch", role, "createdAt", "updatedAt")
       SELECT 'c' || lpad(to_hex(g), 10, '0') || substr(md5(g::text), 1, 14),
              lower(unaccent(f.v || '.' || l.v)) || '.' || g || '@' || (ARRAY['example.com','mail.test','corp.example','uni.example'])[g % 4 + 1],
              f.v || ' ' || l.v,
              lower(unaccent(f.v || ' ' || l.v)),
              'user', now(), now()
         FROM generate_series(1, $1::int) g
         JOIN LATERAL (SELECT ($2::text[])[g % array_length($2::text[], 1) + 1] AS v) f ON true
         JOIN LATERAL (SELECT ($3::text[])[(g / 7) % array_length($3::text[], 1) + 1] AS v) l ON true`,
      [USERS, FIRST, LAST],
    );
    const seedMs = performance.now() - started;
    started = performance.now();
    for (const i of indexes) await direct.query(i.indexdef);
    await direct.query(`ANALYZE "User"`);
    const indexMs = performance.now() - started;
    const size = (await direct.query<{ t: string; i: string }>(`SELECT pg_size_pretty(pg_table_size('"User"')) AS t, pg_size_pretty(pg_indexes_size('"User"')) AS i`)).rows[0]!;
    console.log(`${USERS.toLocaleString("en")} users seeded in ${(seedMs / 1000).toFixed(1)} s; trigram indexes built in ${(indexMs / 1000).toFixed(1)} s; table ${size.t}, indexes ${size.i}`);

    const time = async (label: string, run: () => Promise<unknown>) => {
      await run(); // warm
      const ms: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t = performance.now();
        await run();
        ms.push(performance.now() - t);
      }
      ms.sort((a, b) => a - b);
      console.log(`${label.padEnd(58)} p50 ${quantile(ms, 0.5).toFixed(1).padStart(7)} ms   p95 ${quantile(ms, 0.95).toFixed(1).padStart(7)} ms`);
    };

    const terms: [string, string][] = [
      ["no term (page 1 of everyone)", ""],
      ["'jose' (1 in 16 names: ~188 k matches)", "jose"],
      ["'JOSÉ NÚÑEZ' (~8 k matches)", "JOSÉ NÚÑEZ"],
      ["'schroder' (accent-blind, ~43 k)", "schroder"],
      ["one address, typed in part: 'chloe.andersen.777'", "chloe.andersen.777"],
      ["'zzqx' (no match)", "zzqx"],
      ["'a' (one letter: no trigram)", "a"],
      ["'example.com' (a quarter of all users)", "example.com"],
    ];
    console.log(`\nsearchUserPage (50 a page, newest first), ${RUNS} runs each:`);
    for (const [label, term] of terms) {
      const first = await searchUserPage(term);
      await time(`${label} → ${first.users.length}${first.next ? "+" : ""}`, () => searchUserPage(term));
    }

    // Deep pages: the keyset cursor vs OFFSET for the same page.
    const deep = 200;
    let cursor: string | null = null;
    for (let p = 0; p < deep; p++) cursor = (await searchUserPage("jose", cursor)).next;
    await time(`'jose', page ${deep + 1} by keyset (after=…)`, () => searchUserPage("jose", cursor));
    const offsetSql = `SELECT "id","email","name","role" FROM "User"
       WHERE ("email" LIKE '%jose%' OR "nameSearch" LIKE '%jose%') ORDER BY "id" DESC LIMIT 51 OFFSET ${deep * 50}`;
    await time(`'jose', page ${deep + 1} by OFFSET ${deep * 50}`, () => direct.query(offsetSql));
    const countSql = `SELECT count(*) FROM "User" WHERE ("email" LIKE '%jose%' OR "nameSearch" LIKE '%jose%')`;
    await time(`count(*) of 'jose' matches (what a total would cost)`, () => direct.query(countSql));

    const explain = async (label: string, sql: string, params: unknown[]) => {
      const plan = (await direct.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params)).rows.map((r) => r["QUERY PLAN"]);
      console.log(`\nplan, ${label}:\n  ${plan.join("\n  ")}`);
    };
    const search = `SELECT "id" FROM "User" WHERE ("email" LIKE $1 ESCAPE '!' OR "email" LIKE $1 ESCAPE '!' OR "nameSearch" LIKE $1 ESCAPE '!') ORDER BY "id" DESC LIMIT 51`;
    await explain("'jose nunez'", search, ["%jose nunez%"]);
    await explain("'zzqx'", search, ["%zzqx%"]);
  } finally {
    await direct.end().catch(() => {});
    await closeDb();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
