// The README stays a page a newcomer reads (what it is, how to start, the commands and settings,
// short feature notes); longer text lives in docs/. Every relative link in README.md and the
// Markdown under docs/ must reach a file that exists, and a heading that exists when it names one.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const README_MAX_LINES = 350;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*_]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, "")
    .replace(/\s/g, "-");
}

/** The text outside fenced code blocks (where a `#` line is no heading). */
function unfenced(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return unfenced(markdown).replace(/`[^`\n]*`/g, "");
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of unfenced(readFileSync(file, "utf8")).split("\n")) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

/** Every relative link of `file` that does not reach an existing file (and heading), as "file: target". */
export function brokenLinks(file: string, root: string): string[] {
  const broken: string[] = [];
  for (const [, target] of prose(readFileSync(file, "utf8")).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // https:, mailto:
    const [pathPart, anchor] = target!.split("#") as [string, string | undefined];
    const resolved = pathPart ? path.resolve(path.dirname(file), decodeURIComponent(pathPart)) : file;
    const name = `${path.relative(root, file)}: ${target}`;
    if (!existsSync(resolved)) broken.push(name);
    else if (anchor !== undefined && statSync(resolved).isFile() && resolved.endsWith(".md") && !anchorsOf(resolved).has(decodeURIComponent(anchor).toLowerCase())) broken.push(name);
  }
  return broken;
}

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? markdownUnder(full) : entry.name.endsWith(".md") ? [full] : [];
  });
}

describe("README and docs", () => {
  it("README.md stays at most 350 lines (longer text goes to docs/)", () => {
    const text = readFileSync(path.join(ROOT, "README.md"), "utf8");
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    expect(lines, `README.md has ${lines} lines; move long sections to docs/ and link them`).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("a new developer reads in README.md where a test goes, how to run one file, and that a file's tests share a database", () => {
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Testing a loader or action"), readme.indexOf("\n## ", readme.indexOf("## Testing a loader or action") + 1));
    for (const folder of ["tests/integration/<area>/", "tests/unit/", "tests/browser/"]) expect(section, folder).toContain(folder);
    expect(section).toMatch(/npx vitest run --project sqlite tests\/integration\/\S+\.test\.ts/);
    expect(section).toMatch(/share one database/);
    expect(section).toContain("docs/testing.md#where-a-test-goes");
  });

  it("no table in README.md is cut by a paragraph (each row follows a row, or heads a table)", () => {
    const lines = unfenced(readFileSync(path.join(ROOT, "README.md"), "utf8")).split("\n");
    const stray = lines.filter((line, i) => line.startsWith("|") && !lines[i - 1]?.startsWith("|") && !/^\|[\s:|-]+\|$/.test(lines[i + 1] ?? ""));
    expect(stray).toEqual([]);
  });

  it("every relative link in README.md, deploy/README.md and docs/ reaches an existing file and heading", () => {
    const files = [path.join(ROOT, "README.md"), path.join(ROOT, "deploy/README.md"), ...markdownUnder(path.join(ROOT, "docs"))];
    expect(files.flatMap((f) => brokenLinks(f, ROOT))).toEqual([]);
  });

  describe("the link check", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "doc-links-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(path.join(dir, "docs/decisions"), { recursive: true });
    writeFileSync(path.join(dir, "docs/decisions/001-a.md"), "# The `first` decision, in short\n\n## Context\n\n## Context\n");
    const page = (body: string) => {
      writeFileSync(path.join(dir, "docs/page.md"), body);
      return brokenLinks(path.join(dir, "docs/page.md"), dir);
    };

    it("passes links to files, folders and headings that exist, and leaves code and web addresses alone", () => {
      expect(
        page(
          "[a](decisions/001-a.md) [b](decisions/001-a.md#the-first-decision-in-short) [c](decisions/001-a.md#context-1) " +
            "[d](decisions) [e](#own) [f](https://example.com/missing.md)\n\n## Own\n\n`[g](nowhere.md)`\n\n```md\n[h](nowhere.md)\n```\n",
        ),
      ).toEqual([]);
    });

    it("names a link to a missing file, a missing heading, and a path written from the wrong folder", () => {
      expect(page("[a](decisions/002-b.md) [b](decisions/001-a.md#nothing) [c](docs/decisions/001-a.md) [d](#gone)\n")).toEqual([
        "docs/page.md: decisions/002-b.md",
        "docs/page.md: decisions/001-a.md#nothing",
        "docs/page.md: docs/decisions/001-a.md",
        "docs/page.md: #gone",
      ]);
    });
  });
});
