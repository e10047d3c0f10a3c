// Prisma 6.19.3 configuration for writing migration SQL offline (scripts/prisma-diff.sh only).
// `engine: "js"` selects the WASM schema engine that 6.19 ships, so nothing is downloaded; the
// adapter gives that engine a database to talk to, though a schema-to-schema diff reads no data.
import { defineConfig } from "prisma/config";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";

const postgres = process.env.DB_PROVIDER === "postgres";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: process.env.PRISMA6_SCHEMA!,
  async adapter() {
    return postgres
      ? // Without allowExitOnIdle the CLI waits for the idle pool before exiting (about 10 s).
        new PrismaPg({ connectionString: process.env.PRISMA6_DATABASE_URL!, allowExitOnIdle: true })
      : new PrismaBetterSQLite3({ url: ":memory:" });
  },
});
