// docs/build-your-app.md, the newcomer's guide: every code block is quoted from a file the suite
// compiles (npm run typecheck) and runs (tests/integration/app/, tests/integration/db/), so a
// snippet cannot drift from working code. A block of TypeScript or Prisma says where it comes from
// (`<!-- quoted from PATH -->` just above it) and its lines are that file's, in order — a `// …`
// line stands for lines left out; a shell block runs only commands the project has.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const GUIDE = "docs/build-your-app.md";

type Block = { lang: string; lines: string[]; source: string | null; at: number };

/** The fenced blocks of a markdown text, each with the `quoted from` comment just above it, if any. */
export function blocksOf(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    let j = start - 1;
    while (j >= 0 && lines[j]!.trim() === "") j--;
    const source = j >= 0 ? (/^<!-- quoted from (\S+) -->$/.exec(lines[j]!.trim())?.[1] ?? null) : null;
    blocks.push({ lang: open[1]!, lines: body, source, at: start + 1 });
  }
  return blocks;
}

const GAP = /^\/\/ …/;

/**
 * Null when `block`'s lines are `file`'s: each run between `// …` lines is a run of consecutive
 * lines of the file (compared without indentation or blank lines; for Prisma, the line within the file's line),
 * the runs in order. Otherwise the first line not found.
 */
export function quoteMismatch(block: string[], file: string, lang: string): string | null {
  // Blank lines are not compared: a quote may close them up.
  const fileLines = file.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const same = (fileLine: string, line: string) => (lang === "prisma" ? fileLine.includes(line) : fileLine === line);
  const runs: string[][] = [[]];
  for (const line of block) {
    if (GAP.test(line.trim())) runs.push([]);
    else if (line.trim() !== "") runs.at(-1)!.push(line.trim());
  }
  let from = 0;
  for (const run of runs.filter((r) => r.length > 0)) {
    let found = -1;
    for (let k = from; k + run.length <= fileLines.length && found < 0; k++) {
      if (run.every((line, n) => same(fileLines[k + n]!, line))) found = k;
    }
    if (found < 0) return run[0]!;
    from = found + run.length;
  }
  return null;
}

describe(GUIDE, () => {
  const guide = readFileSync(path.join(ROOT, GUIDE), "utf8");
  const blocks = blocksOf(guide);
  const scripts = Object.keys((JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts);

  it("quotes every TypeScript and Prisma block from a file of the project, line for line", () => {
    const code = blocks.filter((b) => b.lang !== "sh");
    expect(code.length).toBeGreaterThanOrEqual(6);
    for (const block of code) {
      expect(block.source, `${GUIDE}:${block.at} says where its block comes from`).not.toBeNull();
      const file = path.join(ROOT, block.source!);
      expect(existsSync(file), `${GUIDE}:${block.at}: ${block.source}`).toBe(true);
      expect(quoteMismatch(block.lines, readFileSync(file, "utf8"), block.lang), `${GUIDE}:${block.at}: a line not in ${block.source}`).toBeNull();
    }
  });

  it("runs only commands the project has: npm scripts it defines, test files that exist", () => {
    for (const block of blocks.filter((b) => b.lang === "sh")) {
      for (const line of block.lines) {
        const script = /^npm run ([\w:-]+)/.exec(line)?.[1];
        if (script) expect(scripts, `${GUIDE}:${block.at}: npm run ${script}`).toContain(script);
        const testFile = /^npx vitest run --project \w+ (\S+)$/.exec(line)?.[1];
        if (testFile) expect(existsSync(path.join(ROOT, testFile)), `${GUIDE}:${block.at}: ${testFile}`).toBe(true);
        expect(Boolean(script || testFile), `${GUIDE}:${block.at}: ${line}`).toBe(true);
      }
    }
  });

  it("every other page of docs/ that marks a block `quoted from` quotes it line for line", () => {
    const pages = readdirSync(path.join(ROOT, "docs"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".md"));
    const quoted = pages.flatMap((page) =>
      blocksOf(readFileSync(path.join(ROOT, "docs", page), "utf8"))
        .filter((b) => b.source !== null)
        .map((b) => ({ ...b, page: `docs/${page}` })),
    );
    expect(quoted.some((b) => b.page === "docs/features/account-protection.md")).toBe(true);
    for (const block of quoted) {
      const file = path.join(ROOT, block.source!);
      expect(existsSync(file), `${block.page}:${block.at}: ${block.source}`).toBe(true);
      expect(quoteMismatch(block.lines, readFileSync(file, "utf8"), block.lang), `${block.page}:${block.at}: a line not in ${block.source}`).toBeNull();
    }
  });

  it("the quote check fails a line the file does not have, lines out of order, and a run the file splits", () => {
    const file = "a\nb\nc\nd\n";
    expect(quoteMismatch(["a", "b"], file, "ts")).toBeNull();
    expect(quoteMismatch(["a", "// …", "d"], file, "ts")).toBeNull();
    expect(quoteMismatch(["a", "x"], file, "ts")).toBe("a");
    expect(quoteMismatch(["c", "// …", "a"], file, "ts")).toBe("a");
    expect(quoteMismatch(["a", "c"], file, "ts")).toBe("a");
    expect(quoteMismatch(["plan"], "const C = 'plan';\n", "prisma")).toBeNull();
    expect(quoteMismatch(["plan"], "const C = 'plan';\n", "ts")).toBe("plan");
  });
});
