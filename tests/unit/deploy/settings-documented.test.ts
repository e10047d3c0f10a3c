// Every environment variable the code reads is in a settings table of README.md or
// deploy/README.md (a table whose header is `| variable | meaning | default |`), so an operator who
// reads "lists every variable" finds them all (issue 31, docs/decisions/105). The reads are found
// in the sources of app/ and server/: `process.env.X`, `env.X`, `e.X` (the parsed environment of
// app/auth/core/config.server.ts) and their `[...]` forms, a name passed beside `env` to a reader
// (`wholeNumber(env, "X", …)`), a name built from a template of capitals around one `${…}`
// (`AUTH_${preset}_ID`, documented as `AUTH_<PRESET>_ID`) and a prefix of capitals ending in `_`
// that variables are matched by (`AUTH_RATE_LIMIT_`, documented as `AUTH_RATE_LIMIT_<NAME>`).
// The same reads, and those of the npm run commands in scripts/, are in .env.example too
// (ADR 113), each with its default, in a form the env-file reader accepts.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseEnvFile } from "../../../app/auth/core/env-file.server.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** Node's own variable, which server/memory-limits.ts only reads to keep what the operator set. */
const NOT_VESTIBULE_SETTINGS = new Set(["NODE_OPTIONS"]);

/**
 * Variables of the development tooling in scripts/, not settings of the app: the Prisma 6 schema
 * tool (scripts/prisma6/) and the benchmark's own PostgreSQL (scripts/bench.ts, README "Speed").
 */
const TOOLING = new Set(["DB_PROVIDER", "PRISMA6_DATABASE_URL", "PRISMA6_SCHEMA", "VESTIBULE_BENCH_PG_URL"]);

function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    // A tool's own packages (scripts/prisma6/node_modules, installed by npm run db:diff) read theirs.
    .filter((f) => f.isFile() && /\.tsx?$/.test(f.name) && !f.name.endsWith(".d.ts") && !f.parentPath.split(path.sep).includes("node_modules"))
    .map((f) => path.join(f.parentPath, f.name));
}

const NAME = "[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*";
const READS = [
  new RegExp(`(?<![\\w.])(?:process\\.env|env|e)\\??\\.(${NAME})\\b`, "g"),
  new RegExp(`(?<![\\w.])(?:process\\.env|env|e)\\[\\s*["'\`](${NAME})["'\`]\\s*\\]`, "g"),
  new RegExp(`\\(\\s*(?:process\\.env|env)\\s*,\\s*["'](${NAME})["']`, "g"),
];
/** `AUTH_${…}_ID` → "AUTH_*_ID"; a string "AUTH_RATE_LIMIT_" → "AUTH_RATE_LIMIT_*". */
const FAMILIES = [/`([A-Z][A-Z0-9_]*_)\$\{[^}`]+\}(_[A-Z0-9_]*)?`/g, /["']([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_)["']/g];

/** Every variable (a name, or a family as "PREFIX_*_SUFFIX") read in `file`'s text. */
function readsIn(text: string): Set<string> {
  const found = new Set<string>();
  for (const pattern of READS) for (const m of text.matchAll(pattern)) found.add(m[1]!);
  for (const pattern of FAMILIES) for (const m of text.matchAll(pattern)) found.add(`${m[1]}*${m[2] ?? ""}`);
  return found;
}

/** Every name in the first column of the settings tables of a Markdown text; `<…>` becomes `*`. */
function documentedIn(markdown: string): Set<string> {
  const found = new Set<string>();
  let inTable = false;
  for (const line of markdown.split("\n")) {
    if (/^\|\s*variable\s*\|\s*meaning\s*\|\s*default\s*\|/.test(line)) inTable = true;
    else if (!line.startsWith("|")) inTable = false;
    else if (inTable) {
      const first = line.split("|")[1] ?? "";
      for (const m of first.matchAll(/`([A-Z][A-Z0-9_]*(?:<[A-Z_]+>[A-Z0-9_]*)?)`/g)) found.add(m[1]!.replace(/<[A-Z_]+>/, "*"));
    }
  }
  return found;
}

describe("settings documentation", () => {
  it("finds reads and table rows the way the sources and READMEs write them", () => {
    const code = [
      "const a = process.env.PORT ?? 3000; const b = env.LOG_LEVEL?.trim(); e.AUTH_URL; process.env?.X_Y;",
      'env["METRICS_TOKEN"]; wholeNumber(env, "DATABASE_POOL_MAX", {}); const id = `AUTH_${name(id)}_ID`;',
      'const PREFIX = "AUTH_RATE_LIMIT_"; const note = `Invalid ${x}`; a.env.NOT_THIS; ee.NOR_THIS; "Not_A_Prefix_";',
    ].join("\n");
    expect([...readsIn(code)].sort()).toEqual(["AUTH_*_ID", "AUTH_RATE_LIMIT_*", "AUTH_URL", "DATABASE_POOL_MAX", "LOG_LEVEL", "METRICS_TOKEN", "PORT", "X_Y"]);
    const markdown = [
      "| variable | meaning | default |",
      "|---|---|---|",
      "| `AUTH_URL` | the origin, e.g. `HTTPS` | unset |",
      "| `AUTH_OIDC_ID`, `AUTH_OIDC_SECRET` | x | y |",
      "| `AUTH_<PRESET>_ID` | x | y |",
      "",
      "| series | labels |",
      "| `NOT_A_SETTING` | x |",
    ].join("\n");
    expect([...documentedIn(markdown)].sort()).toEqual(["AUTH_*_ID", "AUTH_OIDC_ID", "AUTH_OIDC_SECRET", "AUTH_URL"]);
  });

  it("every environment variable app/ and server/ read is in a settings table of README.md or deploy/README.md", () => {
    const read = new Map<string, string>();
    for (const file of [...sources("app"), ...sources("server")]) {
      for (const name of readsIn(readFileSync(file, "utf8"))) if (!read.has(name)) read.set(name, path.relative(root, file));
    }
    // The scan still sees what it must: a plain read, a parsed one, a family of each kind.
    for (const known of ["PORT", "SHUTDOWN_TIMEOUT_MS", "AUTH_URL", "DATABASE_POOL_MAX", "METRICS_TOKEN", "AUTH_*_ID", "AUTH_RATE_LIMIT_*"]) expect(read.has(known), known).toBe(true);
    const documented = new Set([...documentedIn(readFileSync(path.join(root, "README.md"), "utf8")), ...documentedIn(readFileSync(path.join(root, "deploy/README.md"), "utf8"))]);
    const missing = [...read].filter(([name]) => !documented.has(name) && !NOT_VESTIBULE_SETTINGS.has(name)).map(([name, file]) => `${name} (read in ${file})`);
    expect(missing).toEqual([]);
  });

  it("every environment variable app/, server/ and the npm run commands of scripts/ read is in .env.example, which the env-file reader accepts uncommented", () => {
    const read = new Map<string, string>();
    for (const file of [...sources("app"), ...sources("server"), ...sources("scripts")]) {
      for (const name of readsIn(readFileSync(file, "utf8"))) if (!read.has(name)) read.set(name, path.relative(root, file));
    }
    expect(read.has("AUTH_SESSION_MAX_AGE"), "the scan sees config.server.ts").toBe(true);
    const example = readFileSync(path.join(root, ".env.example"), "utf8");
    const listed = new Set<string>();
    for (const m of example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*(?:<[A-Z_]+>[A-Z0-9_]*)?)=/gm)) listed.add(m[1]!.replace(/<[A-Z_]+>/, "*"));
    const missing = [...read].filter(([name]) => !listed.has(name) && !NOT_VESTIBULE_SETTINGS.has(name) && !TOOLING.has(name)).map(([name, file]) => `${name} (read in ${file})`);
    expect(missing).toEqual([]);
    // As shipped it sets nothing; each `# NAME=default` line, uncommented, is a line .env accepts.
    expect(parseEnvFile(example, ".env.example").size).toBe(0);
    const uncommented = example
      .split("\n")
      .filter((line) => /^# [A-Z][A-Z0-9_]*=/.test(line))
      .map((line) => line.slice(2))
      .join("\n");
    expect(parseEnvFile(uncommented, ".env.example (uncommented)").size).toBeGreaterThan(40);
  });

  it("every environment variable the npm run commands of scripts/ read is in a settings table of README.md or deploy/README.md", () => {
    const documented = new Set([...documentedIn(readFileSync(path.join(root, "README.md"), "utf8")), ...documentedIn(readFileSync(path.join(root, "deploy/README.md"), "utf8"))]);
    const missing: string[] = [];
    for (const file of sources("scripts")) {
      for (const name of readsIn(readFileSync(file, "utf8"))) {
        if (!documented.has(name) && !TOOLING.has(name) && !NOT_VESTIBULE_SETTINGS.has(name)) missing.push(`${name} (read in ${path.relative(root, file)})`);
      }
    }
    expect(missing).toEqual([]);
  });
});
