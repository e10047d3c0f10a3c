// The core (app/auth) is plain Request → Response functions: it returns Responses or plain data
// and leaves react-router's helpers to the route modules in app/routes.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const core = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../app/auth");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

describe("app/auth", () => {
  it("imports nothing from react-router", () => {
    const importing = sources(core)
      .filter((file) => /\bfrom\s+["']react-router["']|import\(\s*["']react-router["']\s*\)/.test(readFileSync(file, "utf8")))
      .map((file) => path.relative(core, file));
    expect(importing).toEqual([]);
  });
});
