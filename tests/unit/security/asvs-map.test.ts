// docs/security/asvs-5.0.md maps every ASVS 5.0 requirement of V6 and V7 (levels 1 and 2) and the
// V3 cookie and header rows to the tests that prove it. This test keeps the
// map honest: a requirement without a row, an unknown status, a "Met" without a test, a link to a
// file that is gone or a test that no longer exists fails the run.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const MAP = path.join(root, "docs/security/asvs-5.0.md");

/** ASVS 5.0.0's requirements of levels 1 and 2 in the chapters the map covers. */
const range = (prefix: string, last: number) => Array.from({ length: last }, (_, i) => `${prefix}.${i + 1}`);
const REQUIRED = [
  ...range("6.1", 3),
  ...range("6.2", 12),
  ...range("6.3", 4),
  ...range("6.4", 4),
  ...range("6.5", 5),
  ...range("6.6", 3),
  ...range("6.8", 4),
  ...range("7.1", 3),
  ...range("7.2", 4),
  ...range("7.3", 2),
  ...range("7.4", 5),
  ...range("7.5", 2),
  ...range("7.6", 2),
  ...range("3.3", 4),
  ...range("3.4", 6),
];
const STATUSES = ["Met", "Partly met", "Not met", "Not applicable"] as const;

type Row = { id: string; level: string; asks: string; status: string; proof: string; line: number };
type TestRef = { file: string; name: string };

function rowsOf(markdown: string): Row[] {
  const rows: Row[] = [];
  markdown.split("\n").forEach((text, index) => {
    const cells = /^\|\s*(\d+\.\d+\.\d+)\s*\|(.*)\|\s*$/.exec(text);
    if (!cells) return;
    // The proof column may hold '|' only inside back-quoted code, which our rows never need.
    const [level = "", asks = "", status = "", ...proof] = cells[2]!.split("|").map((c) => c.trim());
    rows.push({ id: cells[1]!, level, asks, status, proof: proof.join("|"), line: index + 1 });
  });
  return rows;
}

/** `tests/…/x.test.ts` › "part of a test's name" */
function testRefsOf(proof: string): TestRef[] {
  return [...proof.matchAll(/`(tests\/[^`]+\.test\.tsx?)`\s*›\s*"([^"]+)"/g)].map((m) => ({ file: m[1]!, name: m[2]! }));
}

function linksOf(proof: string): string[] {
  return [...proof.matchAll(/\]\((\.\.?\/[^)#\s]+)\)/g)].map((m) => m[1]!);
}

/** The titles of every it/test/describe call in a test file, as written (template parts kept). */
function titlesIn(source: string): string[] {
  const call = /\b(?:it|test|describe)(?:\.(?:each|skipIf|runIf|only|concurrent|sequential)(?:\([^()]*(?:\([^()]*\)[^()]*)*\))?)*\(\s*(["'`])((?:\\.|(?!\1)[\s\S])*?)\1/g;
  return [...source.matchAll(call)].map((m) => m[2]!);
}

/** Every problem of the map, one line each; empty when it is sound. */
function problemsOf(markdown: string, fileExists: (p: string) => boolean, readTest: (p: string) => string): string[] {
  const problems: string[] = [];
  const rows = rowsOf(markdown);
  const seen = new Map<string, number>();
  for (const row of rows) seen.set(row.id, (seen.get(row.id) ?? 0) + 1);
  for (const id of REQUIRED) {
    if (!seen.has(id)) problems.push(`${id}: no row`);
    else if (seen.get(id)! > 1) problems.push(`${id}: ${seen.get(id)} rows`);
  }
  const titles = new Map<string, string[]>();
  for (const row of rows) {
    const where = `${row.id} (line ${row.line})`;
    if (!/^[123]$/.test(row.level)) problems.push(`${where}: level ${JSON.stringify(row.level)}`);
    if (row.asks.length < 10) problems.push(`${where}: says not what it asks`);
    if (!(STATUSES as readonly string[]).includes(row.status)) problems.push(`${where}: status ${JSON.stringify(row.status)}`);
    const refs = testRefsOf(row.proof);
    if ((row.status === "Met" || row.status === "Partly met") && refs.length === 0) problems.push(`${where}: ${row.status} without a test`);
    if (["Partly met", "Not met", "Not applicable"].includes(row.status) && row.proof.replace(/`[^`]*`\s*›\s*"[^"]*"/g, "").trim().length < 20) problems.push(`${where}: ${row.status} without a reason`);
    for (const link of linksOf(row.proof)) {
      if (!fileExists(path.posix.join("docs/security", link))) problems.push(`${where}: link ${link} leads nowhere`);
    }
    for (const { file, name } of refs) {
      if (!fileExists(file)) {
        problems.push(`${where}: ${file} does not exist`);
        continue;
      }
      if (!titles.has(file)) titles.set(file, titlesIn(readTest(file)));
      if (!titles.get(file)!.some((title) => title.includes(name))) problems.push(`${where}: no test in ${file} is named with "${name}"`);
    }
  }
  return problems;
}

/**
 * Every repository path the document names anywhere (rows and prose): a back-quoted path under one
 * of the repository's top folders, and every relative link (resolved from docs/security). A
 * placeholder (`tests/…/x.test.ts`) is no path.
 */
function namedPathsOf(markdown: string): string[] {
  const quoted = [...markdown.matchAll(/`((?:app|server|scripts|tests|docs|deploy|prisma|bench|public)\/[^`\s]*)`/g)]
    .map((m) => m[1]!)
    .filter((p) => !p.includes("…"));
  const links = [...markdown.matchAll(/\]\((\.\.?\/[^)#\s]+)/g)].map((m) => path.posix.join("docs/security", m[1]!));
  return [...new Set([...quoted, ...links])];
}

/** The named paths that do not exist, one line each. */
function missingPathsOf(markdown: string, fileExists: (p: string) => boolean): string[] {
  return namedPathsOf(markdown)
    .filter((p) => !fileExists(p))
    .map((p) => `${p} does not exist`);
}

const onDisk = (p: string) => existsSync(path.join(root, p));
const readOnDisk = (p: string) => readFileSync(path.join(root, p), "utf8");

describe("docs/security/asvs-5.0.md", () => {
  it("has one row per V6, V7 and V3 cookie/header requirement of levels 1 and 2, each proved by tests that exist", () => {
    expect(problemsOf(readFileSync(MAP, "utf8"), onDisk, readOnDisk)).toEqual([]);
  });

  it("a reviewer following any path the document names finds the file there", () => {
    expect(missingPathsOf(readFileSync(MAP, "utf8"), onDisk)).toEqual([]);
  });

  it("the path check fails for a moved file named in prose or a link, and skips placeholders", () => {
    const files = new Set(["tests/unit/security/asvs-map.test.ts", "docs/decisions/001-a.md", "app/auth/signin"]);
    const text =
      "`tests/…/x.test.ts` is the form. `tests/unit/asvs-map.test.ts` reads this file; `tests/unit/security/asvs-map.test.ts` too.\n" +
      "See `app/auth/signin`, [ADR 1](../decisions/001-a.md) and [ADR 9](../decisions/009-gone.md#why).";
    expect(missingPathsOf(text, (p) => files.has(p))).toEqual([
      "tests/unit/asvs-map.test.ts does not exist",
      "docs/decisions/009-gone.md does not exist",
    ]);
  });

  it("the check fails for a missing row, an unknown status, a Met without a test, a vanished test and a dead link", () => {
    const files: Record<string, string> = {
      "tests/x.test.ts": 'describe("group", () => {\n  it("keeps the door shut", () => {});\n  it.each([1, 2])(`counts %i ${"x"}`, () => {});\n});\n',
      "docs/decisions/001-a.md": "",
    };
    const exists = (p: string) => p in files;
    const read = (p: string) => files[p]!;
    const good = REQUIRED.map((id) => `| ${id} | 1 | something it asks for | Met | \`tests/x.test.ts\` › "keeps the door" |`).join("\n");
    expect(problemsOf(good, exists, read)).toEqual([]);
    const bad = good
      .replace(/^\| 6\.1\.1 .*$/m, "")
      .replace(/^(\| 6\.1\.2 \|[^|]*\|[^|]*\|) Met /m, "$1 Done ")
      .replace(/^(\| 6\.1\.3 \|[^|]*\|[^|]*\| Met \|).*$/m, "$1 see the code |")
      .replace(/^(\| 6\.2\.1 \|[^|]*\|[^|]*\| Met \|).*$/m, '$1 `tests/x.test.ts` › "opens the door" |')
      .replace(/^(\| 6\.2\.2 \|[^|]*\|[^|]*\| Met \|).*$/m, '$1 [ADR](../decisions/999-gone.md), `tests/x.test.ts` › "counts %i" |')
      .replace(/^(\| 6\.2\.3 \|[^|]*\|[^|]*\|) Met \|.*$/m, "$1 Not applicable | no. |");
    expect(problemsOf(bad, exists, read)).toEqual([
      "6.1.1: no row",
      expect.stringMatching(/^6\.1\.2 .*status "Done"/),
      expect.stringMatching(/^6\.1\.3 .*Met without a test/),
      expect.stringMatching(/^6\.2\.1 .*no test in tests\/x\.test\.ts is named with "opens the door"/),
      expect.stringMatching(/^6\.2\.2 .*link \.\.\/decisions\/999-gone\.md leads nowhere/),
      expect.stringMatching(/^6\.2\.3 .*Not applicable without a reason/),
    ]);
  });
});
