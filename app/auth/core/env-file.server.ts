// Environment files (ADR 107): the one reader of KEY=value files for every command. Today the npm
// run commands read the file named by VESTIBULE_ENV_FILE (the operator's production settings,
// /etc/vestibule/vestibule.env); a project-root .env, when one is added, goes through the same
// loadEnvFile. A variable already in the environment wins over the file.
//
// The accepted syntax is the part of KEY=value on which systemd's EnvironmentFile= and `sh`
// (`. file`) agree, so the one file serves the systemd unit, a shell and these commands with the
// same values: a value is bare (letters, digits and _ . / : @ % + , = ? -), in single quotes
// (anything but a single quote), or in double quotes without " $ ` \. Anything else stops with the
// file's name and the line number, rather than being read one way here and another way there.
import { readFileSync } from "node:fs";

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

/** The env file the commands read (VESTIBULE_ENV_FILE), loaded into `env`; its path, or null when none is named. */
export function loadCommandEnvFile(env: Record<string, string | undefined> = process.env): string | null {
  const file = env[ENV_FILE_VARIABLE];
  if (!file) return null;
  loadEnvFile(file, env);
  return file;
}
