// The shape of a database schema (tables, columns, keys, indexes, foreign keys) in one comparable
// form, built two ways: from Prisma's DMMF (what the generated client expects) and from the live
// database's catalog (what the migrations actually created). Comparing them is the drift check.
import Database from "better-sqlite3";
import pg from "pg";
import type { Dmmf, DmmfField } from "./prisma-schema.ts";

export type Provider = "sqlite" | "postgres";
export type ColumnShape = { type: string; nullable: boolean; default: string | null };
export type IndexShape = { name: string; columns: string[]; unique: boolean };
export type ForeignKeyShape = { name: string | null; columns: string[]; refTable: string; refColumns: string[]; onDelete: string; onUpdate: string };
export type TableShape = { columns: Record<string, ColumnShape>; primaryKey: string[]; indexes: IndexShape[]; foreignKeys: ForeignKeyShape[] };
export type SchemaShape = Record<string, TableShape>;

const COLUMN_TYPES: Record<Provider, Record<string, string>> = {
  sqlite: { String: "TEXT", Int: "INTEGER", BigInt: "BIGINT", Float: "REAL", Boolean: "BOOLEAN", DateTime: "DATETIME", Bytes: "BLOB", Decimal: "DECIMAL" },
  postgres: {
    String: "text",
    Int: "integer",
    BigInt: "bigint",
    Float: "double precision",
    Boolean: "boolean",
    DateTime: "timestamp(3)",
    Bytes: "bytea",
    Decimal: "numeric(65,30)",
    Json: "jsonb",
  },
};

/** Indexes the PostgreSQL migrations add beyond the schema (schema.test.ts checks that they exist). */
export const POSTGRES_ONLY_INDEXES = new Set(["User_email_trgm_idx", "User_nameSearch_trgm_idx"]);

/** Defaults Prisma computes in the client; they never reach the database. */
const CLIENT_DEFAULTS = new Set(["cuid", "uuid", "nanoid", "ulid"]);

/** Prisma's default referential actions when the schema names none. */
function defaultOnDelete(field: DmmfField, scalars: DmmfField[]): string {
  const required = (field.relationFromFields ?? []).some((f) => scalars.find((s) => s.name === f)?.isRequired);
  return required ? "Restrict" : "SetNull";
}

function expectedDefault(field: DmmfField): string | null {
  const d = field.default;
  if (d === undefined || field.isUpdatedAt) return null;
  if (typeof d === "object" && d !== null && "name" in d) {
    const name = (d as { name: string }).name;
    if (CLIENT_DEFAULTS.has(name)) return null;
    if (name === "now") return "now";
    if (name === "autoincrement") return "autoincrement";
    throw new Error(`schema-shape: no mapping for the default function ${name}()`);
  }
  if (typeof d === "string") return `'${d.replace(/'/g, "''")}'`;
  return String(d);
}

/** What the schema declares, in the names Prisma's migrations use for constraints and indexes. */
export function shapeFromDmmf(dmmf: Dmmf, provider: Provider): SchemaShape {
  const shape: SchemaShape = {};
  const tableOf = (model: string) => {
    const m = dmmf.datamodel.models.find((x) => x.name === model);
    if (!m) throw new Error(`schema-shape: unknown model ${model}`);
    return m.dbName ?? m.name;
  };
  for (const model of dmmf.datamodel.models) {
    const table = model.dbName ?? model.name;
    const scalars = model.fields.filter((f) => f.kind === "scalar" || f.kind === "enum");
    const column = (fieldName: string) => {
      const f = model.fields.find((x) => x.name === fieldName);
      if (!f) throw new Error(`schema-shape: ${model.name} has no field ${fieldName}`);
      return f.dbName ?? f.name;
    };
    const columns: Record<string, ColumnShape> = {};
    for (const f of scalars) {
      if (f.isList) throw new Error(`schema-shape: list field ${model.name}.${f.name} is not mapped`);
      const type = f.kind === "enum" ? f.type : COLUMN_TYPES[provider][f.type];
      if (!type) throw new Error(`schema-shape: no ${provider} column type for Prisma type ${f.type}`);
      columns[f.dbName ?? f.name] = { type, nullable: !f.isRequired, default: expectedDefault(f) };
    }
    const idField = scalars.find((f) => f.isId);
    const primaryKey = idField ? [column(idField.name)] : (model.primaryKey?.fields ?? []).map(column);

    const indexes: IndexShape[] = dmmf.datamodel.indexes
      .filter((i) => i.model === model.name && (i.type === "unique" || i.type === "normal"))
      .map((i) => {
        const cols = i.fields.map((f) => column(f.name));
        const suffix = i.type === "unique" ? "key" : "idx";
        return { name: i.dbName ?? `${table}_${cols.join("_")}_${suffix}`, columns: cols, unique: i.type === "unique" };
      });

    const foreignKeys: ForeignKeyShape[] = model.fields
      .filter((f) => f.kind === "object" && (f.relationFromFields?.length ?? 0) > 0)
      .map((f) => {
        const cols = f.relationFromFields!.map(column);
        const target = dmmf.datamodel.models.find((m) => m.name === f.type)!;
        const targetColumn = (n: string) => target.fields.find((x) => x.name === n)?.dbName ?? n;
        return {
          name: provider === "postgres" ? `${table}_${cols.join("_")}_fkey` : null,
          columns: cols,
          refTable: tableOf(f.type),
          refColumns: f.relationToFields!.map(targetColumn),
          onDelete: f.relationOnDelete ?? defaultOnDelete(f, scalars),
          onUpdate: "Cascade",
        };
      });

    shape[table] = { columns, primaryKey, indexes: sortIndexes(indexes), foreignKeys: sortForeignKeys(foreignKeys) };
  }
  return shape;
}

const sortIndexes = (xs: IndexShape[]) => [...xs].sort((a, b) => a.name.localeCompare(b.name));
const sortForeignKeys = (xs: ForeignKeyShape[]) => [...xs].sort((a, b) => a.columns.join().localeCompare(b.columns.join()));

const SQLITE_ACTIONS: Record<string, string> = { CASCADE: "Cascade", "SET NULL": "SetNull", RESTRICT: "Restrict", "NO ACTION": "NoAction", "SET DEFAULT": "SetDefault" };
const PG_ACTIONS: Record<string, string> = { c: "Cascade", n: "SetNull", r: "Restrict", a: "NoAction", d: "SetDefault" };

function normaliseDefault(value: string | null): string | null {
  if (value == null) return null;
  if (/^current_timestamp(\(\d*\))?$/i.test(value) || /^now\(\)$/i.test(value)) return "now";
  if (/^nextval\(/i.test(value)) return "autoincrement";
  return value.replace(/::[a-z ]+(\(\d+(,\d+)?\))?$/i, "");
}

/** What a SQLite database file actually contains (Prisma's bookkeeping table excluded). */
export function shapeOfSqlite(file: string): SchemaShape {
  const sqlite = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = sqlite
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_prisma_migrations' ORDER BY name")
      .pluck()
      .all() as string[];
    const shape: SchemaShape = {};
    for (const table of tables) {
      const info = sqlite.prepare(`PRAGMA table_info("${table}")`).all() as { name: string; type: string; notnull: number; dflt_value: string | null; pk: number }[];
      const columns: Record<string, ColumnShape> = {};
      for (const c of info) columns[c.name] = { type: c.type, nullable: c.notnull === 0, default: normaliseDefault(c.dflt_value) };
      const primaryKey = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
      const list = sqlite.prepare(`PRAGMA index_list("${table}")`).all() as { name: string; unique: number; origin: string }[];
      const indexes = list
        .filter((i) => i.origin !== "pk")
        .map((i) => ({
          name: i.name,
          columns: (sqlite.prepare(`PRAGMA index_info("${i.name}")`).all() as { seqno: number; name: string }[]).sort((a, b) => a.seqno - b.seqno).map((c) => c.name),
          unique: i.unique === 1,
        }));
      const fkRows = sqlite.prepare(`PRAGMA foreign_key_list("${table}")`).all() as { id: number; seq: number; table: string; from: string; to: string; on_update: string; on_delete: string }[];
      const byId = new Map<number, typeof fkRows>();
      for (const r of fkRows) byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
      const foreignKeys = [...byId.values()].map((rows) => {
        rows.sort((a, b) => a.seq - b.seq);
        return {
          name: null,
          columns: rows.map((r) => r.from),
          refTable: rows[0]!.table,
          refColumns: rows.map((r) => r.to),
          onDelete: SQLITE_ACTIONS[rows[0]!.on_delete] ?? rows[0]!.on_delete,
          onUpdate: SQLITE_ACTIONS[rows[0]!.on_update] ?? rows[0]!.on_update,
        };
      });
      shape[table] = { columns, primaryKey, indexes: sortIndexes(indexes), foreignKeys: sortForeignKeys(foreignKeys) };
    }
    return shape;
  } finally {
    sqlite.close();
  }
}

/** What a PostgreSQL database's public schema actually contains (Prisma's bookkeeping table excluded). */
export async function shapeOfPostgres(url: string): Promise<SchemaShape> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const cols = await client.query<{ table_name: string; column_name: string; data_type: string; datetime_precision: number | null; is_nullable: string; column_default: string | null }>(
      `SELECT c.table_name, c.column_name, c.data_type, c.datetime_precision, c.is_nullable, c.column_default
         FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.table_name <> '_prisma_migrations'
        ORDER BY c.table_name, c.ordinal_position`,
    );
    const idx = await client.query<{ table: string; name: string; unique: boolean; primary: boolean; columns: string[] }>(
      `SELECT t.relname AS table, i.relname AS name, ix.indisunique AS unique, ix.indisprimary AS primary,
              array(SELECT a.attname::text FROM unnest(ix.indkey) WITH ORDINALITY k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.ord) AS columns
         FROM pg_index ix
         JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_class i ON i.oid = ix.indexrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public' AND t.relname <> '_prisma_migrations'`,
    );
    const fks = await client.query<{ name: string; table: string; ref_table: string; confdeltype: string; confupdtype: string; columns: string[]; ref_columns: string[] }>(
      `SELECT con.conname AS name, cl.relname AS table, ref.relname AS ref_table, con.confdeltype, con.confupdtype,
              array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
                      JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o) AS columns,
              array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, o)
                      JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o) AS ref_columns
         FROM pg_constraint con
         JOIN pg_class cl ON cl.oid = con.conrelid
         JOIN pg_class ref ON ref.oid = con.confrelid
         JOIN pg_namespace n ON n.oid = cl.relnamespace
        WHERE con.contype = 'f' AND n.nspname = 'public'`,
    );
    const shape: SchemaShape = {};
    const table = (name: string) => (shape[name] ??= { columns: {}, primaryKey: [], indexes: [], foreignKeys: [] });
    for (const c of cols.rows) {
      const type =
        c.data_type === "timestamp without time zone"
          ? `timestamp(${c.datetime_precision})`
          : c.data_type === "timestamp with time zone"
            ? `timestamptz(${c.datetime_precision})`
            : c.data_type;
      table(c.table_name).columns[c.column_name] = { type, nullable: c.is_nullable === "YES", default: normaliseDefault(c.column_default) };
    }
    for (const i of idx.rows) {
      // PostgreSQL-only trigram indexes for /admin's search (ADR 085): Prisma cannot declare them in
      // the schema both databases share, so the migration alone creates them.
      if (POSTGRES_ONLY_INDEXES.has(i.name)) continue;
      if (i.primary) table(i.table).primaryKey = i.columns;
      else table(i.table).indexes.push({ name: i.name, columns: i.columns, unique: i.unique });
    }
    for (const f of fks.rows) {
      table(f.table).foreignKeys.push({
        name: f.name,
        columns: f.columns,
        refTable: f.ref_table,
        refColumns: f.ref_columns,
        onDelete: PG_ACTIONS[f.confdeltype] ?? f.confdeltype,
        onUpdate: PG_ACTIONS[f.confupdtype] ?? f.confupdtype,
      });
    }
    for (const t of Object.values(shape)) {
      t.indexes = sortIndexes(t.indexes);
      t.foreignKeys = sortForeignKeys(t.foreignKeys);
    }
    return shape;
  } finally {
    await client.end();
  }
}
