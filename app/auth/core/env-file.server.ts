// Environment files (ADR 107, 113): the one reader of KEY=value files for every command. `npm run
// dev`, `npm start` and the npm run commands read ONE file: the one VESTIBULE_ENV_FILE names (the
// operator's production settings, /etc/vestibule/vestibule.env) when it is set, else the project
// root's .env when there is one (a developer's settings, git-ignored; .env.example lists them).
// A variable already in the environment wins over the file.
//
// The accepted syntax is the part of KEY=value on which systemd's EnvironmentFile= and `sh`
// (`. file`) agree, so the one file serves the systemd unit, a shell and these commands with the
// same values: a value is bare (letters, digits and _ . / : @ % + , = ? -), in single quotes
// (anything but a single quote), or in double quotes without " $ ` \. Anything else stops with the
// file's name and the line number, rather than being read one way here and another way there.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** The variable naming the env file the commands read (`VESTIBULE_ENV_FILE=/etc/vestibule/vestibule.env npm run …`). */
export const ENV_FILE_VARIABLE = "VESTIBULE_ENV_FILE";
/** Where deploy/README.md installs the production settings (the systemd unit's EnvironmentFile=). */
export const PRODUCTION_ENV_FILE = "/etc/vestibule/vestibule.env";

/** A file that cannot be read or a line that is not KEY=value as above: `file:line: what`. */
export class EnvFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EnvFileError";
  }
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const BARE = /^[A-Za-z0-9_./:@%+,=?-]*$/;
const SINGLE = /^'([^']*)'$/;
const DOUBLE = /^"([^"$`\\]*)"$/;

/** The assignments of an env file's text, in file order (a name given twice: the last value). */
export function parseEnvFile(text: string, file: string): Map<string, string> {
  const values = new Map<string, string>();
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  lines.forEach((raw, index) => {
    const where = `${file}:${index + 1}`;
    if (raw.includes("\r")) throw new EnvFileError(`${where}: a carriage return (save the file with Unix line endings)`);
    const line = raw.replace(/^[ \t]+/, "").replace(/[ \t]+$/, "");
    if (line === "" || line.startsWith("#")) return;
    const eq = line.indexOf("=");
    const name = eq === -1 ? line : line.slice(0, eq);
    if (eq === -1 || !NAME.test(name)) {
      throw new EnvFileError(`${where}: expected NAME=value (a name of letters, digits and _, no space before =)`);
    }
    const rest = line.slice(eq + 1);
    const quoted = SINGLE.exec(rest) ?? DOUBLE.exec(rest);
    if (quoted) values.set(name, quoted[1]!);
    else if (BARE.test(rest)) values.set(name, rest);
    else if (rest.startsWith("'") && rest.endsWith("'") && rest.length > 1) {
      throw new EnvFileError(`${where}: the value of ${name} holds a single quote, which neither a shell nor systemd reads inside single quotes`);
    } else {
      throw new EnvFileError(
        `${where}: put the value of ${name} in single quotes (${name}='…'): it holds characters that a shell and systemd read differently (spaces, < > $ " \\ and the like)`,
      );
    }
  });
  return values;
}

/**
 * Reads `file` into `env`: each variable the environment does not already have is set. Returns
 * the names it set. An unreadable file or a malformed line throws EnvFileError; nothing is set then.
 */
export function loadEnvFile(file: string, env: Record<string, string | undefined> = process.env): string[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new EnvFileError(`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const values = parseEnvFile(text, file);
  const set: string[] = [];
  for (const [name, value] of values) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    set.push(name);
  }
  return set;
}

/** The project's own env file, in its root: read when VESTIBULE_ENV_FILE is unset. */
export const PROJECT_ENV_FILE = ".env";

/**
 * The env file the commands and the servers read, loaded into `env`: VESTIBULE_ENV_FILE's when it
 * is set (an unreadable one stops), else `<root>/.env` when it exists (`root`: the project root,
 * where npm runs its scripts). Its path, or null when there is none.
 */
export function loadCommandEnvFile(env: Record<string, string | undefined> = process.env, root: string = process.cwd()): string | null {
  const named = env[ENV_FILE_VARIABLE];
  const file = named || path.join(root, PROJECT_ENV_FILE);
  if (!named && !existsSync(file)) return null;
  loadEnvFile(file, env);
  return file;
}
