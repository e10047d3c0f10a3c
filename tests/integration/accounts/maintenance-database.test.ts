// Maintenance commands and the database they use (issue 31, ADR 107), run the way an operator
// runs them: `npm run …` from the project root, in a shell that has none of the production
// settings, and with VESTIBULE_ENV_FILE naming the production env file as shipped
// (deploy/vestibule.env, only the values a test must replace changed). A command never creates a
// database: with none to find it stops and names the one it looked for; every command says on
// stderr which database it used.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { sqliteFile } from "../../../app/db/location.server.ts";
import { createUser, PASSWORD, signIn, withEnv } from "../../support/auth.ts";
import { productionEnvFile, runNpm } from "../../support/cli.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { TEST_AUTH_SECRET } from "../../support/env.ts";
import { CookieJar } from "../../support/http.ts";
import { sessionOf } from "../../support/oauth-flow.ts";
import { isSecurityNotice, startSmtpSink } from "../../support/smtp-sink.ts";
import { refreshRevocations, resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { encodeJwt } from "../../../app/auth/core/jwt.server.ts";

beforeEach(() => resetDatabase());

const scratch = () => mkdtempSync(path.join(tmpdir(), "vestibule-ops-"));

/** How the commands name this test's database on stderr. */
function databaseNamed(): RegExp {
  if (!process.env.DATABASE_URL) return new RegExp(`database: SQLite ${sqliteFile(process.env.VESTIBULE_DATA_DIR!).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\n`);
  const url = new URL(process.env.DATABASE_URL);
  return new RegExp(`database: PostgreSQL ${url.pathname.slice(1)} on ${url.hostname}:${url.port || 5432} as ${url.username}\\n`);
}

describe(`maintenance commands find the database, never create one (${dbLabel})`, { timeout: 180_000 }, () => {
  it("an operator runs npm run user:add, user:disable and db:cleanup from the project root with no settings: each stops naming the database it looked for, and creates nothing", async () => {
    // The folder stands for /opt/vestibule/.data on a machine whose database is PostgreSQL: empty.
    const data = scratch();
    const env = { VESTIBULE_DATA_DIR: data };
    const results = await Promise.all([
      runNpm("user:add", ["--email", "ada@example.com"], env, `${PASSWORD}\n`),
      runNpm("user:disable", ["--email", "ada@example.com"], env),
      runNpm("db:cleanup", [], env),
    ]);
    for (const [i, name] of ["user:add", "user:disable", "db:cleanup"].entries()) {
      expect(results[i], name).toMatchObject({ code: 1 });
      expect(results[i]!.stderr, name).toContain(
        `${name}: no database: DATABASE_URL is not set and there is no SQLite database at ${sqliteFile(data)}`,
      );
      expect(results[i]!.stderr, name).toContain("VESTIBULE_ENV_FILE=/etc/vestibule/vestibule.env");
      expect(results[i]!.stdout, name).not.toMatch(/created|disabled|deleted/);
    }
    expect(readdirSync(data)).toEqual([]);

    // db:migrate still creates it; then the commands find it.
    const migrated = await runNpm("db:migrate", [], env);
    expect(migrated.code).toBe(0);
    expect(readdirSync(data)).toContain("vestibule.db");
    const added = await runNpm("user:add", ["--email", "ada@example.com"], env, `${PASSWORD}\n`);
    expect(added).toMatchObject({ code: 0 });
    expect(added.stdout).toContain("created ada@example.com");
    expect(added.stderr).toContain(`user:add: database: SQLite ${sqliteFile(data)}\n`);
  });

  it("with VESTIBULE_ENV_FILE naming the production env file, npm run user:disable ends the live user's sessions and says which database it used", async () => {
    await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar());
    const decoy = scratch();
    // The variable is named in the shell, nothing else: the file gives NODE_ENV, the secret, the
    // database. (On PostgreSQL a stray data folder in the shell is not what the file names.)
    const shell = dbLabel === "postgres" ? { VESTIBULE_DATA_DIR: decoy } : {};
    const disabled = await runNpm("user:disable", ["--email", "ada@example.com"], { VESTIBULE_ENV_FILE: productionEnvFile(), ...shell });
    expect(disabled).toMatchObject({ code: 0 });
    expect(disabled.stdout).toContain("ada@example.com disabled; 1 session(s) ended");
    expect(disabled.stderr).toMatch(databaseNamed());
    expect(disabled.stderr).not.toContain(TEST_AUTH_SECRET);
    if (process.env.DATABASE_URL) expect(disabled.stderr).not.toContain(new URL(process.env.DATABASE_URL).password || "\0");
    expect(await sessionOf(jar)).toBeNull();
    expect(readdirSync(decoy)).toEqual([]);
  });

  it("a malformed line in the env file stops every command with the file and line number, before anything is read or written", async () => {
    const file = path.join(scratch(), "vestibule.env");
    writeFileSync(file, readFileSync(productionEnvFile(), "utf8").replace(/^AUTH_EMAIL_FROM=.*$/m, "AUTH_EMAIL_FROM=Vestibule <no-reply@vestibule.example.com>"));
    const line = readFileSync(file, "utf8").split("\n").findIndex((l) => l.startsWith("AUTH_EMAIL_FROM=")) + 1;
    const [find, cleanup] = await Promise.all([
      runNpm("user:find", ["--email", "ada@example.com"], { VESTIBULE_ENV_FILE: file }),
      runNpm("db:cleanup", [], { VESTIBULE_ENV_FILE: file }),
    ]);
    for (const result of [find, cleanup]) {
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${file}:${line}: put the value of AUTH_EMAIL_FROM in single quotes`);
    }
    const missing = await runNpm("user:find", ["--email", "ada@example.com"], { VESTIBULE_ENV_FILE: "/nonexistent/vestibule.env" });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("/nonexistent/vestibule.env: cannot be read (ENOENT)");
  });

  it("an operator who types --password is told it shows in ps and npm's banner; the password on stdin does not show", async () => {
    const file = productionEnvFile();
    const [typed, piped] = await Promise.all([
      runNpm("user:add", ["--email", "ada@example.com", "--password", PASSWORD], { VESTIBULE_ENV_FILE: file }),
      runNpm("user:add", ["--email", "bob@example.com"], { VESTIBULE_ENV_FILE: file }, `${PASSWORD}\n`),
    ]);
    expect(typed.code).toBe(0);
    expect(typed.stderr).toContain("user:add: warning: --password shows the password to every user of this machine (ps) and in npm's banner; give it on standard input");
    expect(piped.code).toBe(0);
    expect(piped.stdout + piped.stderr).not.toContain(PASSWORD);
    expect(piped.stderr).not.toContain("warning");
    const bob = await testDb().user.findUniqueOrThrow({ where: { email: "bob@example.com" } });
    expect(bob).toBeTruthy();
  });
});

describe(`npm run user:add at a terminal (${dbLabel})`, { timeout: 180_000 }, () => {
  it("an operator types the password at the prompt: it is not echoed, and the user is created with it", async () => {
    // `script` gives the command a terminal (a pty) as an operator's ssh session does.
    const env = { ...process.env, VESTIBULE_ENV_FILE: productionEnvFile(), VESTIBULE_LOG: "silent" };
    for (const key of Object.keys(env)) if (key.startsWith("AUTH_") || key === "DATABASE_URL" || key === "VESTIBULE_DATA_DIR" || key === "NODE_ENV") delete env[key as keyof typeof env];
    const child = spawn("script", ["-qec", "npm run user:add -- --email carol@example.com", "/dev/null"], { cwd: path.resolve(import.meta.dirname, "../../.."), env });
    let seen = "";
    let typed = false;
    child.stdout.on("data", (chunk: Buffer) => {
      seen += chunk.toString("utf8");
      if (!typed && seen.includes("password for carol@example.com (not shown): ")) {
        typed = true;
        child.stdin.write(`${PASSWORD}\r`);
      }
    });
    const [code] = (await once(child, "close")) as [number];
    expect(typed).toBe(true);
    expect(code).toBe(0);
    expect(seen).toContain("created carol@example.com");
    expect(seen).not.toContain(PASSWORD);
    const { jar } = await signIn(new CookieJar(), "carol@example.com", PASSWORD);
    expect((await sessionOf(jar))?.user.email).toBe("carol@example.com");
  });
});

describe(`npm run user:add on a user who exists (${dbLabel})`, { timeout: 180_000 }, () => {
  it("an operator sets a known user's password with npm run user:add: the owner gets the password-changed security e-mail and every session ends; a new user gets none", async () => {
    const sink = await startSmtpSink();
    try {
      await createUser("ada@example.com", "Ada");
      const { jar } = await signIn(new CookieJar());
      const file = productionEnvFile({ AUTH_EMAIL_SERVER: sink.url });

      const created = await runNpm("user:add", ["--email", "bob@example.com"], { VESTIBULE_ENV_FILE: file }, `${PASSWORD}\n`);
      expect(created.stdout).toContain("created bob@example.com");
      const updated = await runNpm("user:add", ["--email", "ada@example.com"], { VESTIBULE_ENV_FILE: file }, "a brand new passphrase for ada\n");
      expect(updated).toMatchObject({ code: 0 });
      expect(updated.stdout).toContain("updated ada@example.com");

      const [notice] = await sink.waitFor(1);
      expect(sink.messages).toHaveLength(1);
      expect(notice!.envelope.to).toEqual(["ada@example.com"]);
      expect(isSecurityNotice(notice!)).toBe(true);
      expect(notice!.subject).toBe("Your Vestibule password was changed");
      expect(notice!.text).toContain("An administrator of this site made this change.");

      const events = await testDb().authEvent.findMany({ where: { type: "password-changed" } });
      expect(events.map((e) => JSON.parse(e.detail ?? "{}"))).toEqual([{ count: 1, source: "cli" }]);
      // This process's poll of the revocations (every instance runs it within REVOCATION_POLL_MS).
      await refreshRevocations();
      expect(await sessionOf(jar)).toBeNull();
      const { jar: again } = await signIn(new CookieJar(), "ada@example.com", "a brand new passphrase for ada");
      expect((await sessionOf(again))?.user.email).toBe("ada@example.com");
    } finally {
      await sink.close();
    }
  });
});

describe(`npm run sessions:end-all (${dbLabel})`, { timeout: 180_000 }, () => {
  /** The session `jar` reads under `strategy`, as an instance configured so would answer it. */
  async function sessionUnder(strategy: "jwt" | "database", jar: CookieJar) {
    const undo = withEnv({ AUTH_SESSION_STRATEGY: strategy });
    try {
      return await sessionOf(jar);
    } finally {
      undo();
    }
  }

  it("an operator ends every user's sessions with npm run sessions:end-all --yes: each signed-in user's next request is refused, jwt and database sessions alike", async () => {
    await createUser("ada@example.com", "Ada");
    await createUser("bob@example.com", "Bob");
    const jwtJar = (await signIn(new CookieJar(), "ada@example.com")).jar;
    const undo = withEnv({ AUTH_SESSION_STRATEGY: "database" });
    let databaseJar: CookieJar | undefined;
    try {
      databaseJar = (await signIn(new CookieJar(), "bob@example.com")).jar;
    } finally {
      undo();
    }
    // A cookie minted before sids existed has no row to end: only a cut-off ends it.
    const config = getConfig();
    const legacy = await encodeJwt({
      payload: { name: "Bob", email: "bob@example.com", picture: null, sub: (await testDb().user.findUniqueOrThrow({ where: { email: "bob@example.com" } })).id },
      secrets: config.secrets,
      salt: "authjs.session-token",
      maxAge: config.sessionMaxAge,
      now: new Date(Date.now() - 60_000),
    });
    const legacyJar = () => new CookieJar({ "authjs.session-token": legacy });
    expect((await sessionUnder("jwt", legacyJar()))?.user.email).toBe("bob@example.com");
    expect((await sessionUnder("jwt", jwtJar))?.user.email).toBe("ada@example.com");
    expect((await sessionUnder("database", databaseJar!))?.user.email).toBe("bob@example.com");
    const file = productionEnvFile();

    // Without --yes it ends nothing, says what it would do, and exits 2 (as user:delete does).
    const asked = await runNpm("sessions:end-all", [], { VESTIBULE_ENV_FILE: file });
    expect(asked).toMatchObject({ code: 2 });
    expect(asked.stderr).toContain("this ends every session of every user (2 now) on every instance; add --yes to end them");
    await refreshRevocations();
    expect(await sessionUnder("jwt", jwtJar)).not.toBeNull();

    const ended = await runNpm("sessions:end-all", ["--yes"], { VESTIBULE_ENV_FILE: file });
    expect(ended).toMatchObject({ code: 0 });
    expect(ended.stdout).toContain("every session ended on every instance (2 open)");
    expect(ended.stderr).toMatch(/sessions:end-all: database: /);
    // This process's poll of the revocations (every instance runs it within REVOCATION_POLL_MS).
    await refreshRevocations();
    expect(await sessionUnder("jwt", jwtJar)).toBeNull();
    expect(await sessionUnder("database", databaseJar!)).toBeNull();
    expect(await sessionUnder("jwt", legacyJar())).toBeNull();
    // An instance started after the run (its list loaded afresh) refuses them too.
    resetRevocations();
    expect(await sessionUnder("jwt", legacyJar())).toBeNull();
    expect(await sessionUnder("jwt", jwtJar)).toBeNull();

    const events = await testDb().authEvent.findMany({ where: { type: "sessions-ended" } });
    expect(events.map((e) => ({ userId: e.userId, detail: JSON.parse(e.detail ?? "{}") }))).toEqual([{ userId: null, detail: { count: 2, scope: "all", source: "cli" } }]);

    // Signing in again works at once, under either strategy: the new cookie is issued after the cut-off.
    expect((await sessionUnder("jwt", (await signIn(new CookieJar(), "ada@example.com")).jar))?.user.email).toBe("ada@example.com");
  });
});
