// Preloaded (`node --import ./bench/statement-count.mjs`) by bench/refresh-probe.ts: counts the SQL
// statements the server runs — every better-sqlite3 statement executed (run/get/all/iterate) and
// every PostgreSQL query sent by node-postgres — and writes the running total to
// STATEMENT_COUNT_OUT every 50 ms. Nothing of this runs in production.
import { renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.cwd(), "package.json"));
let count = 0;
// With STATEMENT_TEXTS set, each statement's text is counted too (the file gets count, then the texts).
const texts = process.env.STATEMENT_TEXTS ? new Map() : null;
const seen = (sql) => texts?.set(sql, (texts.get(sql) ?? 0) + 1);
const Database = require("better-sqlite3");
const probe = new Database(":memory:");
const statement = Object.getPrototypeOf(probe.prepare("SELECT 1"));
for (const name of ["run", "get", "all", "iterate"]) {
  const original = statement[name];
  statement[name] = function (...args) {
    count++;
    seen(this.source);
    return original.apply(this, args);
  };
}
const exec = Database.prototype.exec;
Database.prototype.exec = function (...args) {
  count++;
  seen(args[0]);
  return exec.apply(this, args);
};
probe.close();
const pg = require("pg");
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (...args) {
  count++;
  seen(typeof args[0] === "string" ? args[0] : args[0]?.text);
  return query.apply(this, args);
};
// Written aside and renamed, so a reader never sees the file empty.
setInterval(() => {
  writeFileSync(`${process.env.STATEMENT_COUNT_OUT}.next`, texts ? `${count}\n${JSON.stringify([...texts])}` : String(count));
  renameSync(`${process.env.STATEMENT_COUNT_OUT}.next`, process.env.STATEMENT_COUNT_OUT);
}, 50).unref();
