// Building blocks for bad-input tests: a seeded random source (runs are reproducible), malformed
// values of every kind a request can carry, what a response must never contain, and a
// one-query snapshot of the row counts of every table.
import { db } from "../../app/db/client.server.ts";
import { modelTables } from "./db.ts";

/** A small seeded PRNG (mulberry32): the same seed gives the same requests. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  /** Characters from the whole range: ASCII, controls, Latin-1, BMP (lone surrogates too) and astral. */
  text(maxLength: number): string {
    const length = this.int(maxLength + 1);
    let out = "";
    for (let i = 0; i < length; i++) {
      const kind = this.int(6);
      const code =
        kind === 0 ? this.int(0x20) : kind <= 2 ? 0x20 + this.int(0x5f) : kind === 3 ? 0x80 + this.int(0x80) : kind === 4 ? this.int(0x10000) : 0x10000 + this.int(0xfffff);
      out += String.fromCodePoint(code);
    }
    return out;
  }
  bytes(maxLength: number): Uint8Array {
    const out = new Uint8Array(this.int(maxLength + 1));
    for (let i = 0; i < out.length; i++) out[i] = this.int(256);
    return out;
  }
}

/** `%XX` for every byte: arbitrary bytes, most of them not UTF-8, as a URL or cookie carries them. */
export const percentBytes = (bytes: Uint8Array) => [...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");

/** Lone surrogates replaced by U+FFFD (String.prototype.toWellFormed, not in this project's lib). */
const wellFormed = (text: string) => text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");

/**
 * Text as a server sees it in a header: its UTF-8 bytes, one Latin-1 character each (how Node
 * decodes header bytes), without NUL, CR and LF, which no client can send in a value.
 */
export const headerSafe = (text: string) => Buffer.from(wellFormed(text), "utf8").toString("latin1").replace(/[\0\r\n]/g, "");

/** encodeURIComponent that takes lone surrogates too (as U+FFFD, like a browser's form encoder). */
export const encode = (text: string) => encodeURIComponent(wellFormed(text));

/** Bytes as Node presents raw header bytes: one Latin-1 character per byte. */
export const latin1 = (bytes: Uint8Array) => headerSafe(Buffer.from(bytes).toString("latin1"));

/** Hand-picked malformed scalars: encodings that fail to decode, controls, lookalikes, sizes. */
export const NASTY_STRINGS: readonly string[] = [
  "",
  " ",
  "%",
  "%%",
  "%zz",
  "%C3%28",
  "%FF%FE%FD",
  "%ED%A0%80", // an encoded lone surrogate
  "%E0%80%AF", // overlong "/"
  "%00",
  "%00%00x",
  "\u0001\u0002\u0007\u001b[31m",
  "\u007f\u0085\u2028\u2029",
  "\ud800",
  "\udfff\ud800",
  "\ufeff\u202e",
  "💩".repeat(50),
  "null",
  "undefined",
  "[object Object]",
  "true",
  "0",
  "-1",
  "1e309",
  "NaN",
  "__proto__",
  "constructor",
  "toString",
  "//evil.example",
  "/\\evil.example",
  "javascript:alert(1)",
  "http://evil.example/",
  "ada@example.com\u0000@evil.example",
  "\"ada\"@example.com",
  "ada@example.com,bob@example.com",
  "../../../../etc/passwd",
  "<script>alert(1)</script>",
  "'; DROP TABLE \"User\"; --",
  "a".repeat(4097),
  "b".repeat(16_000),
];

/** Values of the wrong JSON type for a field that should be a string. */
export const WRONG_JSON_TYPES: readonly unknown[] = [null, 0, -1, 1.5, 1e308, true, false, [], ["a", "b"], {}, { $gt: "" }, { toString: "x" }, [[[]]], { __proto__: { admin: true } }];

/** JSON nested `depth` levels deep: arrays, objects, or both, as text (JSON.stringify would recurse). */
export function deepJson(depth: number, kind: "array" | "object" | "mixed"): string {
  let open = "";
  let close = "";
  for (let i = 0; i < depth; i++) {
    const array = kind === "array" || (kind === "mixed" && i % 2 === 0);
    open += array ? "[" : '{"a":';
    close = (array ? "]" : "}") + close;
  }
  return `${open}1${close}`;
}

/** What no response may carry: a stack trace or an internal message. */
export const LEAKS: readonly { name: string; pattern: RegExp }[] = [
  { name: "stack frame", pattern: /\bat .*\(.*:\d+:\d+\)/ },
  { name: "stack frame (anonymous)", pattern: /\n\s+at [\w.<>$]+ \S+:\d+:\d+/ },
  { name: "Error:", pattern: /\b(?:Type|Reference|Syntax|Range|Prisma\w*)?Error: / },
  { name: "node_modules path", pattern: /node_modules[\\/]/ },
  { name: "source path", pattern: /\/work\/main\/|file:\/\/\// },
  { name: "React Router's POST message", pattern: /You made a \w+ request/ },
  { name: "React Router's no-action message", pattern: /did not provide an `action`/ },
  { name: "React Router's no-loader message", pattern: /did not provide a `loader`/ },
  { name: "React Router's no-route message", pattern: /No route matches URL/ },
  { name: "Unexpected Server Error", pattern: /Unexpected Server Error/ },
  { name: "Prisma invocation", pattern: /Invalid `[^`]*` invocation|prisma\.\w+\.\w+\(|PrismaClient\w*/ },
  { name: "Prisma error code", pattern: /\bP[12]\d{3}\b/ },
  { name: "SQL error", pattern: /SQLITE_\w+|duplicate key value|violates \w+ constraint|syntax error at or near/ },
];

export function leaksIn(body: string): string[] {
  return LEAKS.filter(({ pattern }) => pattern.test(body)).map(({ name }) => name);
}

/**
 * Rows per table that a refused request must not change, in one query. Not counted: the rate-limit
 * counters (LimitCounter), and AuthEvent rows of type signin-failed and rate-limited —
 * counting a refused attempt is what those are for.
 */
export const UNCOUNTED_TABLES = ["LimitCounter"] as const;
export const LEGITIMATE_REFUSAL_EVENTS = ["signin-failed", "rate-limited"] as const;

export async function rowCounts(): Promise<Record<string, number>> {
  const tables = modelTables().filter((t) => !(UNCOUNTED_TABLES as readonly string[]).includes(t));
  const events = LEGITIMATE_REFUSAL_EVENTS.map((e) => `'${e}'`).join(", ");
  const columns = tables.map((t) =>
    t === "AuthEvent"
      ? `(SELECT COUNT(*) FROM "AuthEvent" WHERE "type" NOT IN (${events})) AS "${t}"`
      : `(SELECT COUNT(*) FROM "${t}") AS "${t}"`,
  );
  const [row] = await db().$queryRawUnsafe<Record<string, bigint | number>[]>(`SELECT ${columns.join(", ")}`);
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, Number(v)]));
}

/** The tables whose counts differ, as "Table a→b". */
export function countChanges(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.keys(after)
    .filter((t) => before[t] !== after[t])
    .map((t) => `${t} ${before[t]}→${after[t]}`);
}
