// Drift checks along the whole chain: prisma/models.prisma → derived per-provider schema →
// generated client → committed migrations → the database the migrations build.
import { readFileSync } from "node:fs";
import path from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { sqliteFile } from "../../../app/db/location.server.ts";
import { migrate } from "../../../app/db/migrate.server.ts";
import { PrismaClient as PostgresClient } from "../../../prisma/generated/postgres/client.ts";
import { PrismaClient as SqliteClient } from "../../../prisma/generated/sqlite/client.ts";
import { clientClassPath, PATCH_MARK, patchClientClass } from "../../../scripts/prisma-client-patch.ts";
import { deriveSchema, derivedSchemaPath, PROVIDERS, type ProviderName } from "../../../scripts/prisma-derive.ts";
import { dbLabel, scratchDatabase } from "../../support/db.ts";
import { getDmmf, type Dmmf } from "../../support/prisma-schema.ts";
import { POSTGRES_ONLY_INDEXES, shapeFromDmmf, shapeOfPostgres, shapeOfSqlite, type SchemaShape } from "../../support/schema-shape.ts";

const root = path.resolve(path.dirname(derivedSchemaPath("sqlite")), "..", "..");
const models = readFileSync(path.join(root, "prisma", "models.prisma"), "utf8");
const providers = Object.keys(PROVIDERS) as ProviderName[];

type ClientInternals = { _engineConfig: { inlineSchema: string; activeProvider: string; compilerWasm: { getQueryCompilerWasmModule: () => Promise<WebAssembly.Module> } }; _runtimeDataModel: { models: Record<string, { dbName: string | null; fields: { name: string; kind: string; type: string }[] }> } };

// Constructing a client opens no connection; these are only read, never queried.
const generated: Record<ProviderName, ClientInternals> = {
  sqlite: new SqliteClient({ adapter: new PrismaBetterSqlite3({ url: ":memory:" }) }) as unknown as ClientInternals,
  postgres: new PostgresClient({ adapter: new PrismaPg({ connectionString: "postgresql://unused@127.0.0.1:1/unused" }) }) as unknown as ClientInternals,
};

describe("the generated client's query compiler (docs/decisions/097)", () => {
  test.each(providers)("the %s client reads it from its file and keeps no imported base64 module", async (provider) => {
    const source = readFileSync(clientClassPath(provider), "utf8");
    // On failure: run npm run db:generate (it patches what prisma generate wrote).
    expect(source).toContain(PATCH_MARK);
    expect(source).not.toMatch(/await import\("@prisma\/client\/runtime\/query_compiler_[a-z]+_bg\.[a-z]+\.wasm-base64/);
    const compiler = await generated[provider]._engineConfig.compilerWasm.getQueryCompilerWasmModule();
    expect(compiler).toBeInstanceOf(WebAssembly.Module);
    expect(WebAssembly.Module.exports(compiler).map((e) => e.name)).toContain("memory");
  });

  const asGenerated = [
    "config.compilerWasm = {",
    '  getRuntime: async () => await import("@prisma/client/runtime/query_compiler_fast_bg.sqlite.mjs"),',
    "",
    "  getQueryCompilerWasmModule: async () => {",
    '    const { wasm } = await import("@prisma/client/runtime/query_compiler_fast_bg.sqlite.wasm-base64.mjs")',
    "    return await decodeBase64AsWasm(wasm)",
    "  },",
    "",
    '  importName: "./query_compiler_fast_bg.js"',
    "}",
  ].join("\n");

  test("the patch replaces only the loader, and a second run changes nothing", () => {
    const patched = patchClientClass(asGenerated);
    expect(patched).toContain('getRuntime: async () => await import("@prisma/client/runtime/query_compiler_fast_bg.sqlite.mjs")');
    expect(patched).toContain('resolve("@prisma/client/runtime/query_compiler_fast_bg.sqlite.wasm-base64.mjs")');
    expect(patched).not.toContain("const { wasm } = await import(");
    expect(patched).toContain('importName: "./query_compiler_fast_bg.js"');
    expect(patchClientClass(patched)).toBe(patched);
  });

  test("a client loading its compiler some other way (a Prisma upgrade) fails the command instead of going unpatched", () => {
    expect(() => patchClientClass(asGenerated.replace("decodeBase64AsWasm(wasm)", "decodeWasm(wasm)"))).toThrow(/does not load its query compiler the way this patch expects/);
  });
});

describe("schema sources", () => {
  test.each(providers)("prisma/%s/schema.prisma is derived from the current prisma/models.prisma", (provider) => {
    const onDisk = readFileSync(derivedSchemaPath(provider), "utf8");
    // On failure: run npm run db:generate.
    expect(onDisk).toBe(deriveSchema(provider, models));
  });

  test.each(providers)("the generated %s client was generated from the derived schema", (provider) => {
    const derived = getDmmf(readFileSync(derivedSchemaPath(provider), "utf8")).datamodel;
    const client = generated[provider];
    expect(client._engineConfig.activeProvider).toBe(PROVIDERS[provider].datasource);
    // Prisma re-formats the schema text it embeds, so the comparison is on what it means.
    // On failure: run npm run db:generate.
    expect(getDmmf(client._engineConfig.inlineSchema).datamodel).toEqual(derived);
    const runtime = Object.fromEntries(
      Object.entries(client._runtimeDataModel.models).map(([name, m]) => [name, { dbName: m.dbName, fields: m.fields.map((f) => [f.name, f.kind, f.type]) }]),
    );
    const expected = Object.fromEntries(derived.models.map((m) => [m.name, { dbName: m.dbName, fields: m.fields.map((f) => [f.name, f.kind, f.type]) }]));
    expect(runtime).toEqual(expected);
  });

  test("both providers describe the same models and fields", () => {
    const [a, b] = providers.map((p) => getDmmf(readFileSync(derivedSchemaPath(p), "utf8")).datamodel);
    expect(a).toEqual(b);
  });
});

describe(`the migrated ${dbLabel} database`, () => {
  const dmmf: Dmmf = getDmmf(readFileSync(derivedSchemaPath(dbLabel), "utf8"));
  const expected = shapeFromDmmf(dmmf, dbLabel);
  const shapeOf = (databaseUrl: string | null, dataDir: string): Promise<SchemaShape> | SchemaShape =>
    databaseUrl ? shapeOfPostgres(databaseUrl) : shapeOfSqlite(sqliteFile(dataDir));

  let actual: SchemaShape;
  beforeAll(async () => {
    // This worker's database: a clone of the run's template, which the committed migrations built.
    const { databaseUrl, dataDir } = getConfig();
    actual = await shapeOf(databaseUrl, dataDir);
  });

  const scratch: { drop(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(scratch.map((s) => s.drop()));
  });

  test("has exactly the tables, columns, keys, indexes and foreign keys the schema declares", () => {
    expect(Object.keys(expected).length).toBeGreaterThan(0);
    expect(actual).toEqual(expected);
  });

  test.runIf(dbLabel === "postgres")("PostgreSQL has the trigram indexes /admin's search reads (beyond the schema)", async () => {
    const client = new pg.Client({ connectionString: getConfig().databaseUrl! });
    await client.connect();
    const { rows } = await client.query<{ indexname: string; indexdef: string }>(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'User'`);
    await client.end();
    const trigram = rows.filter((r) => r.indexdef.includes("gin_trgm_ops")).map((r) => r.indexname);
    expect(new Set(trigram)).toEqual(POSTGRES_ONLY_INDEXES);
  });

  test("the check notices drift: a missing index, an extra column, a changed delete rule", async () => {
    const db = await scratchDatabase();
    scratch.push(db);
    await migrate({ databaseUrl: db.databaseUrl, dataDir: db.dataDir, log: () => {} });
    expect(await shapeOf(db.databaseUrl, db.dataDir)).toEqual(expected);

    const drift = db.databaseUrl
      ? [
          'DROP INDEX "Session_expires_idx"',
          'ALTER TABLE "User" ADD COLUMN "nickname" TEXT',
          'ALTER TABLE "Passkey" DROP CONSTRAINT "Passkey_userId_fkey"',
          'ALTER TABLE "Passkey" ADD CONSTRAINT "Passkey_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE',
        ]
      : // SQLite cannot alter a foreign key in place; two kinds of drift are enough there.
        ['DROP INDEX "Session_expires_idx"', 'ALTER TABLE "User" ADD COLUMN "nickname" TEXT'];
    if (db.databaseUrl) {
      const client = new pg.Client({ connectionString: db.databaseUrl });
      await client.connect();
      for (const s of drift) await client.query(s);
      await client.end();
    } else {
      const sqlite = new Database(sqliteFile(db.dataDir));
      for (const s of drift) sqlite.exec(s);
      sqlite.close();
    }

    const actual = await shapeOf(db.databaseUrl, db.dataDir);
    expect(actual).not.toEqual(expected);
    expect(actual.Session!.indexes.map((i) => i.name)).not.toContain("Session_expires_idx");
    expect(actual.User!.columns).toHaveProperty("nickname");
    if (db.databaseUrl) expect(actual.Passkey!.foreignKeys[0]!.onDelete).toBe("SetNull");
  });
});
