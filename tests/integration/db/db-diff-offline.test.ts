// The "add a column" walk-through of docs/build-your-app.md, as a developer runs it: a field added
// to the User model in prisma/models.prisma, then `npm run db:diff -- <name>` writing the migration
// for SQLite and for PostgreSQL with no database server to reach (PostgreSQL's side runs on PGlite,
// scripts/prisma6/pglite-server.mjs). In a scratch copy of the project's schema and scripts under
// git, so the repository's own migrations are never touched. It reaches no database of the
// test's, so it runs once, in the sqlite project.
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { dbLabel } from "../../support/db.ts";

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const scratch = mkdtempSync(path.join(tmpdir(), "vestibule-db-diff-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The column the guide adds, as it writes it in the User model. */
const COLUMN = '  plan          String    @default("free")';

describe.skipIf(dbLabel !== "sqlite")("npm run db:diff with no database server (the guide's 'add a column')", () => {
  it("writes the migration that adds the column for both databases, whatever DATABASE_URL names", { timeout: 600_000 }, async () => {
    // Prisma 6 and PGlite, installed once into the project's scripts/prisma6 (the script's first use).
    const tool = path.join(root, "scripts/prisma6");
    if (!existsSync(path.join(tool, "node_modules/@electric-sql/pglite-socket"))) {
      await run("bash", ["-c", `source scripts/node22.sh && npm install --prefix scripts/prisma6 --no-audit --no-fund --loglevel=error`], { cwd: root });
    }
    for (const file of ["scripts/prisma-diff.sh", "scripts/node22.sh", "scripts/prisma-derive.ts", "prisma/models.prisma", "prisma/sqlite", "prisma/postgres"]) {
      cpSync(path.join(root, file), path.join(scratch, file), { recursive: true });
    }
    for (const file of ["package.json", "package-lock.json", "prisma.config.ts", "pglite-server.mjs"]) cpSync(path.join(tool, file), path.join(scratch, "scripts/prisma6", file));
    symlinkSync(path.join(tool, "node_modules"), path.join(scratch, "scripts/prisma6/node_modules"));
    symlinkSync(path.join(root, "node_modules"), path.join(scratch, "node_modules"));
    if (existsSync(path.join(root, ".tools"))) symlinkSync(path.join(root, ".tools"), path.join(scratch, ".tools"));
    const git = (...args: string[]) => run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: scratch });
    await git("init", "-q");
    await git("add", "-A");
    await git("commit", "-qm", "schema");

    // The guide's step: the field goes into the User model.
    const models = readFileSync(path.join(scratch, "prisma/models.prisma"), "utf8");
    const withColumn = models.replace(/(model User \{\n(?:.*\n)*?  locale +String\?\n)/, `$1${COLUMN}\n`);
    expect(withColumn).not.toBe(models);
    writeFileSync(path.join(scratch, "prisma/models.prisma"), withColumn);

    const before = (p: string) => new Set(readdirSync(path.join(scratch, `prisma/${p}/migrations`)));
    const existing = { sqlite: before("sqlite"), postgres: before("postgres") };
    // A DATABASE_URL naming a port nothing listens on: the diff must not need it.
    const { stdout } = await run("sh", ["scripts/prisma-diff.sh", "add_user_plan"], {
      cwd: scratch,
      env: { ...process.env, DATABASE_URL: "postgresql://postgres@127.0.0.1:9/none", PGHOST: "127.0.0.1", PGPORT: "9" },
    });
    for (const p of ["sqlite", "postgres"] as const) {
      const added = readdirSync(path.join(scratch, `prisma/${p}/migrations`)).filter((f) => !existing[p].has(f));
      expect(added, p).toHaveLength(1);
      expect(added[0], p).toMatch(/^\d{14}_add_user_plan$/);
      expect(stdout).toContain(`wrote prisma/${p}/migrations/${added[0]}/migration.sql`);
      const sql = readFileSync(path.join(scratch, `prisma/${p}/migrations/${added[0]}/migration.sql`), "utf8");
      // PostgreSQL adds the column; SQLite, whose ALTER TABLE is limited, may rebuild the table with it.
      expect(sql, p).toMatch(p === "postgres" ? /ALTER TABLE "User" ADD COLUMN\s+"plan" TEXT NOT NULL DEFAULT 'free';/ : /"plan" TEXT NOT NULL DEFAULT 'free'/);
    }
  });
});
