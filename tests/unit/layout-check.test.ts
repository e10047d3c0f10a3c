// The import-layout check (npm run check:cycles, .dependency-cruiser.cjs) against small generated
// trees: each rule passes a tree that keeps it and fails one that breaks it, so the check can fail.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { cruise, type ICruiseResult, type IConfiguration } from "dependency-cruiser";
import { afterAll, describe, expect, it } from "vitest";

const config: IConfiguration = createRequire(import.meta.url)("../../.dependency-cruiser.cjs");
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A fresh project folder holding `files` (path → source) and a tsconfig.json. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "layout-check-"));
  dirs.push(dir);
  writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { paths: { "~/*": ["./app/*"] } } }));
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), source);
  }
  return dir;
}

/** Cruises `dir`'s app/ and server/ with the project's rules; the whole result. */
async function cruiseProject(dir: string): Promise<ICruiseResult> {
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const { output } = await cruise(["app", "server"], {
      ...config.options,
      validate: true,
      ruleSet: { forbidden: config.forbidden },
      tsConfig: { fileName: path.join(dir, "tsconfig.json") },
    });
    return output as ICruiseResult;
  } finally {
    process.chdir(cwd);
  }
}

/** The names of the rules a tree of `files` breaks. */
async function check(files: Record<string, string>): Promise<string[]> {
  const { summary } = await cruiseProject(project(files));
  return [...new Set(summary.violations.map((v) => v.rule.name))].sort();
}

const exports = (name: string) => `export const ${name} = 1;\n`;
// A tree that keeps every rule: signin/ on top, methods in the middle, accounts and core below.
const GOOD: Record<string, string> = {
  "app/auth/core/config.server.ts": exports("config"),
  "app/auth/core/session.server.ts": `import { config } from "./config.server";\nexport const session = config;\n`,
  "app/auth/core/index.ts": `export { session } from "./session.server";\n`,
  "app/auth/accounts/users.server.ts": `import { session } from "../core/session.server";\nexport const users = session;\n`,
  "app/auth/signin/provider.ts": `import type { session } from "../core/session.server";\nexport type Provider = { id: string; s?: typeof session };\n`,
  "app/auth/two-factor/store.server.ts": `import { users } from "../accounts/users.server";\nexport const gate = users;\n`,
  "app/auth/signin/flow.server.ts": `import { users } from "../accounts/users.server";\nimport { gate } from "../two-factor/store.server";\nexport const runStrategy = [users, gate];\n`,
  "app/auth/credentials/strategy.server.ts": `import type { Provider } from "../signin/provider";\nimport { runStrategy } from "../signin/flow.server";\nexport const credentials: Provider = { id: String(runStrategy) };\n`,
  "app/auth/oauth/strategy.server.ts": `import type { Provider } from "../signin/provider";\nimport { users } from "../accounts/users.server";\nexport const oauth: Provider = { id: String(users) };\n`,
  "app/auth/oauth/tokens.server.ts": `import { oauth } from "./strategy.server";\nexport const tokens = oauth;\n`,
  "app/auth/signin/registry.server.ts": `import { credentials } from "../credentials/strategy.server";\nimport { oauth } from "../oauth/strategy.server";\nexport const providers = [credentials, oauth];\n`,
  "node_modules/react-router/package.json": JSON.stringify({ name: "react-router", main: "index.js" }),
  "node_modules/react-router/index.js": "export const redirect = 1;\n",
  "app/routes/home.ts": `import { redirect } from "react-router";\nexport const loader = redirect;\n`,
  "app/mail/types.ts": `export type Mailer = { send(): void };\n`,
  "app/mail/smtp.server.ts": `import type { Mailer } from "./types";\nexport const smtp: Mailer = { send() {} };\n`,
  "app/mail/mailer.server.ts": `import { smtp } from "./smtp.server";\nexport const mailer = smtp;\n`,
  "app/entry.server.tsx": `import { session } from "~/auth/core";\nexport const handleError = session;\n`,
  "server/main.ts": `import type { handleError } from "../app/entry.server.tsx";\nimport { fastPath } from "./fast-path.ts";\nexport const serve = [fastPath, 1 as unknown as typeof handleError];\n`,
  "server/fast-path.ts": exports("fastPath"),
  "app/routes/signin.ts": `import { providers } from "~/auth/signin/registry.server";\nimport { session } from "~/auth/core";\nexport const loader = [providers, session];\n`,
};

describe("npm run check:cycles", () => {
  it("passes a tree that keeps the layout", async () => {
    expect(await check(GOOD)).toEqual([]);
  });

  it.each([
    ["an import cycle (type-only counts)", { "app/auth/core/config.server.ts": `import type { session } from "./session.server";\nexport const config = 1 as unknown as typeof session;\n` }, "no-circular"],
    ["core importing a method", { "app/auth/core/config.server.ts": `import { credentials } from "../credentials/strategy.server";\nexport const config = credentials;\n` }, "core-knows-no-method"],
    ["core importing accounts", { "app/auth/core/config.server.ts": `import type { users } from "../accounts/users.server";\nexport const config = 1 as unknown as typeof users;\n` }, "core-knows-no-method"],
    ["app/auth importing react-router", { "app/auth/signin/pages.server.ts": `import { redirect } from "react-router";\nexport const page = redirect;\n` }, "auth-without-react-router"],
    ["accounts importing a method", { "app/auth/accounts/audit.server.ts": `import { tokens } from "../oauth/tokens.server";\nexport const audit = tokens;\n` }, "accounts-only-on-core"],
    ["a method importing another method", { "app/auth/credentials/link.server.ts": `import { tokens } from "../oauth/tokens.server";\nexport const link = tokens;\n` }, "method-imports-no-other-method"],
    ["a future method importing another method", { "app/auth/passkeys/strategy.server.ts": `import { tokens } from "../oauth/tokens.server";\nexport const passkeys = tokens;\n` }, "method-imports-no-other-method"],
    ["a method importing the registry", { "app/auth/oauth/list.server.ts": `import { providers } from "../signin/registry.server";\nexport const list = providers;\n` }, "method-imports-only-the-flow-from-signin"],
    ["a method importing the endpoint", { "app/auth/signin/endpoint.server.ts": exports("providerFlow"), "app/auth/email/page.server.ts": `import { providerFlow } from "../signin/endpoint.server";\nexport const page = providerFlow;\n` }, "method-imports-only-the-flow-from-signin"],
    ["the flow importing the registry", { "app/auth/signin/flow.server.ts": `import { providers } from "./registry.server";\nexport const runStrategy = providers;\n` }, "flow-below-the-registry"],
    ["the second factor importing the flow", { "app/auth/two-factor/page.server.ts": `import { runStrategy } from "../signin/flow.server";\nexport const page = runStrategy;\n` }, "two-factor-below-the-flow"],
    ["the second factor importing a method", { "app/auth/two-factor/page.server.ts": `import { tokens } from "../oauth/tokens.server";\nexport const page = tokens;\n` }, "two-factor-below-the-flow"],
    ["a method importing the second factor", { "app/auth/credentials/skip.server.ts": `import { gate } from "../two-factor/store.server";\nexport const skip = gate;\n` }, "methods-never-import-two-factor"],
    ["a method importing the password flows", { "app/auth/passwords/signup.server.ts": `import { credentials } from "../credentials/strategy.server";\nexport const signup = credentials;\n`, "app/auth/oauth/list.server.ts": `import { signup } from "../passwords/signup.server";\nexport const list = signup;\n` }, "passwords-above-everything"],
    ["signin importing the password flows", { "app/auth/passwords/signup.server.ts": `import { credentials } from "../credentials/strategy.server";\nexport const signup = credentials;\n`, "app/auth/signin/pages.server.ts": `import { signup } from "../passwords/signup.server";\nexport const page = signup;\n` }, "passwords-above-everything"],
    ["app/auth importing a folder index", { "app/auth/accounts/users.server.ts": `import { session } from "../core";\nexport const users = session;\n` }, "folder-index-is-for-routes"],
    ["a transport importing the picker", { "app/mail/outbox.server.ts": `import { mailer } from "./mailer.server";\nexport const outbox = mailer;\n` }, "mail-types-at-the-bottom"],
    ["mail types importing app code", { "app/mail/types.ts": `import type { config } from "../auth/core/config.server";\nexport type Mailer = { send(): void; c?: typeof config };\n` }, "mail-types-import-nothing"],
    ["the server importing app code besides the entry", { "server/main.ts": `import { session } from "../app/auth/core/session.server";\nexport const serve = session;\n` }, "server-sees-the-app-only-through-its-entry"],
    ["the server importing a command", { "scripts/bench.ts": exports("bench"), "server/main.ts": `import { bench } from "../scripts/bench";\nexport const serve = bench;\n` }, "server-sees-the-app-only-through-its-entry"],
    ["app code importing the server", { "app/routes/health.ts": `import { fastPath } from "../../server/fast-path.ts";\nexport const loader = fastPath;\n` }, "app-knows-no-server"],
  ])("fails on %s", async (_case, change, rule) => {
    expect(await check({ ...GOOD, ...change })).toContain(rule);
  });
});

// TypeScript 7 (the native compiler) has no JavaScript API yet: dependency-cruiser's own tsc
// extractor cannot load it. swc reads the sources, `import type` included; these prove it does,
// so the cycle check does not quietly lose type-only edges (issue 33).
describe("npm run check:cycles under TypeScript 7", () => {
  const TYPE_ONLY_CYCLE = {
    ...GOOD,
    "app/auth/core/config.server.ts": `import type { session } from "./session.server";\nexport const config = 1 as unknown as typeof session;\n`,
  };

  it("records an `import type` edge as a type-only dependency, and a cycle made only through it", async () => {
    const result = await cruiseProject(project(TYPE_ONLY_CYCLE));
    const config = result.modules.find((m) => m.source === "app/auth/core/config.server.ts");
    const edge = config?.dependencies.find((d) => d.resolved === "app/auth/core/session.server.ts");
    expect(edge?.dependencyTypes).toContain("type-only");
    expect(edge?.circular).toBe(true);
    expect(result.summary.violations.map((v) => v.rule.name)).toContain("no-circular");
    // Nothing dependency-cruiser warns may have been missed.
    expect(result.summary.environment?.issues ?? []).toEqual([]);
  });

  it("the command a developer runs fails on a planted type-only cycle and warns of no missed TypeScript files", async () => {
    const dir = project(TYPE_ONLY_CYCLE);
    const bin = path.resolve("node_modules/dependency-cruiser/bin/dependency-cruiser.mjs");
    // The same arguments as package.json's check:cycles, with the project's own configuration.
    const { code, out } = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        process.execPath,
        [bin, "app", "server", "--config", path.resolve(".dependency-cruiser.cjs"), "--output-type", "err"],
        { cwd: dir },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, out: `${stdout}\n${stderr}` }),
      );
    });
    expect(out).toContain("no-circular");
    expect(out).toContain("app/auth/core/config.server.ts");
    expect(code).not.toBe(0);
    expect(out).not.toMatch(/missing-(tsc|typescript|swc)-transpiler|likely to have missed/);
  });
});
