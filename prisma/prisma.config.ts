// Prisma CLI configuration. DB_PROVIDER=postgres selects the PostgreSQL schema and migrations;
// the default is the embedded SQLite database. Only `prisma generate` runs here (the CLI cannot
// download its schema engine offline); migrations are applied by scripts/migrate.ts.
import { defineConfig } from "prisma/config";

const provider = process.env.DB_PROVIDER === "postgres" ? "postgres" : "sqlite";

export default defineConfig({
  schema: `${provider}/schema.prisma`,
  migrations: { path: `${provider}/migrations` },
  datasource: {
    url:
      provider === "postgres"
        ? (process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/vestibule")
        : "file:../.data/vestibule.db",
  },
});
