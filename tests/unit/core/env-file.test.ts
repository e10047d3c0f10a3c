// The env file operators keep in /etc/vestibule/vestibule.env is read three ways: by systemd
// (EnvironmentFile= of the unit), by a shell (`. file`, for a backup script or a quick psql) and by
// the npm run commands (VESTIBULE_ENV_FILE, app/auth/core/env-file.server.ts, ADR 107). These
// tests hold the three to the same values, on the file as shipped and on every form the loader
// accepts, and show that what it refuses stops with the line number.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EnvFileError, loadCommandEnvFile, loadEnvFile, parseEnvFile } from "../../../app/auth/core/env-file.server.ts";
import { parseSystemdEnvironmentFile } from "../../support/systemd-env.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const SHIPPED = path.join(root, "deploy/vestibule.env");

/** What `sh` sets when it sources `file` (set -a exports every assignment), for the names in `names`. */
function sourcedBySh(file: string, names: Iterable<string>): Record<string, string> {
  const out = execFileSync("env", ["-i", "sh", "-c", 'set -a; . "$1" && exec env -0', "sh", file], { encoding: "utf8" });
  const all = Object.fromEntries(
    out
      .split("\0")
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
  );
  return Object.fromEntries([...names].map((name) => [name, all[name]]));
}

function tempFile(text: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "vestibule-env-")), "test.env");
  writeFileSync(file, text);
  return file;
}

describe("env files read by systemd, sh and the commands", () => {
  it("an operator sources the shipped deploy/vestibule.env in sh, and sh, systemd and the commands read the same values", () => {
    const text = readFileSync(SHIPPED, "utf8");
    const systemd = parseSystemdEnvironmentFile(text);
    expect(systemd.AUTH_EMAIL_FROM).toBe("Vestibule <no-reply@vestibule.example.com>");
    const loaded = Object.fromEntries(parseEnvFile(text, SHIPPED));
    expect(loaded).toEqual(systemd);
    expect(sourcedBySh(SHIPPED, Object.keys(systemd))).toEqual(systemd);
  });

  it("every form the loader accepts means the same to sh and systemd", () => {
    const text = [
      "# a comment",
      "  # an indented comment",
      "",
      "BARE=postgresql://u:p@127.0.0.1:5432/db?x=1%2C2",
      "SECRET=abc+/def==",
      "EMPTY=",
      "SINGLE='Vestibule <no-reply@example.com> $HOME \"x\" \\n `id` # not a comment'",
      'DOUBLE="two words; and a # sign"',
      "  INDENTED='kept'  ",
      "TWICE=first",
      "TWICE=second",
      "",
    ].join("\n");
    const file = tempFile(text);
    const loaded = Object.fromEntries(parseEnvFile(text, file));
    expect(loaded.SINGLE).toBe('Vestibule <no-reply@example.com> $HOME "x" \\n `id` # not a comment');
    expect(loaded.TWICE).toBe("second");
    expect(loaded).toEqual(parseSystemdEnvironmentFile(text));
    expect(sourcedBySh(file, Object.keys(loaded))).toEqual(loaded);
  });

  it("a line that sh and systemd would read differently, or not at all, stops with the file and its line number", () => {
    const bad: [string, RegExp][] = [
      ["A=1\nAUTH_EMAIL_FROM=Vestibule <no-reply@example.com>\n", /x\.env:2: put the value of AUTH_EMAIL_FROM in single quotes/],
      ["\n\nA=$HOME\n", /x\.env:3: put the value of A in single quotes/],
      ['A="say \\"hi\\""\n', /x\.env:1: put the value of A/],
      ["A='it''s'\n", /x\.env:1: the value of A holds a single quote/],
      ["A=unterminated'\n", /x\.env:1: put the value of A/],
      ["export A=1\n", /x\.env:1: expected NAME=value/],
      ["A = 1\n", /x\.env:1: expected NAME=value/],
      ["; a systemd comment sh cannot read\n", /x\.env:1: expected NAME=value/],
      ["just words\n", /x\.env:1: expected NAME=value/],
      ["A=1\r\nB=2\r\n", /x\.env:1: a carriage return/],
      ["A=two words\n", /x\.env:1: put the value of A in single quotes/],
      ["A=~/x\n", /x\.env:1: put the value of A in single quotes/],
    ];
    for (const [text, message] of bad) {
      expect(() => parseEnvFile(text, "/etc/x.env"), text).toThrow(EnvFileError);
      expect(() => parseEnvFile(text, "/etc/x.env"), text).toThrow(message);
    }
  });

  it("a variable already in the environment wins over the file; a malformed file sets nothing", () => {
    const env: Record<string, string | undefined> = { DATABASE_URL: "postgresql://from-the-shell/db" };
    const set = loadEnvFile(tempFile("DATABASE_URL='postgresql://from-the-file/db'\nLOG_LEVEL=info\n"), env);
    expect(env).toEqual({ DATABASE_URL: "postgresql://from-the-shell/db", LOG_LEVEL: "info" });
    expect(set).toEqual(["LOG_LEVEL"]);

    const untouched: Record<string, string | undefined> = {};
    expect(() => loadEnvFile(tempFile("LOG_LEVEL=info\nBAD LINE\n"), untouched)).toThrow(/test\.env:2: expected NAME=value/);
    expect(untouched).toEqual({});
    expect(() => loadEnvFile("/nonexistent/vestibule.env", untouched)).toThrow(/\/nonexistent\/vestibule\.env: cannot be read \(ENOENT\)/);
  });
});

describe("the project's .env and VESTIBULE_ENV_FILE (ADR 113)", () => {
  function project(dotEnv: string | null): string {
    const dir = mkdtempSync(path.join(tmpdir(), "vestibule-project-"));
    if (dotEnv !== null) writeFileSync(path.join(dir, ".env"), dotEnv);
    return dir;
  }

  it("a developer's .env in the project root is read when VESTIBULE_ENV_FILE is unset; the shell's value wins", () => {
    const root = project("AUTH_SITE_NAME='Acme Notes'\nPORT=4000\n");
    const env: Record<string, string | undefined> = { PORT: "5000" };
    expect(loadCommandEnvFile(env, root)).toBe(path.join(root, ".env"));
    expect(env).toEqual({ PORT: "5000", AUTH_SITE_NAME: "Acme Notes" });
  });

  it("without a .env nothing is read and nothing stops", () => {
    const env: Record<string, string | undefined> = {};
    expect(loadCommandEnvFile(env, project(null))).toBeNull();
    expect(env).toEqual({});
  });

  it("VESTIBULE_ENV_FILE, when set, is the one file read: the project's .env is left alone", () => {
    const root = project("LOG_LEVEL=debug\nPORT=4000\n");
    const named = tempFile("LOG_LEVEL=warn\n");
    const env: Record<string, string | undefined> = { VESTIBULE_ENV_FILE: named };
    expect(loadCommandEnvFile(env, root)).toBe(named);
    expect(env).toEqual({ VESTIBULE_ENV_FILE: named, LOG_LEVEL: "warn" });
  });

  it("a malformed line of .env stops the start naming the file and its line", () => {
    const root = project("PORT=4000\nAUTH_SITE_NAME=Acme Notes\n");
    const env: Record<string, string | undefined> = {};
    expect(() => loadCommandEnvFile(env, root)).toThrow(EnvFileError);
    expect(() => loadCommandEnvFile(env, root)).toThrow(`${path.join(root, ".env")}:2: put the value of AUTH_SITE_NAME in single quotes`);
    expect(env).toEqual({});
  });
});
