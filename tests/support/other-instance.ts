// Another instance of the provider for a test, as its own process on the test's database
// (tests/support/provider-instance.ts): started here, it warms up and waits; `go()` makes it do its
// one task at the moment the test chooses and resolves with the JSON line it prints. The
// environment is the test's (DATABASE_URL, AUTH_SECRET, AUTH_URL, AUTH_PROVIDER) plus `env`.
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export async function otherInstance<Answer>(env: Record<string, string>): Promise<{ go: () => Promise<Answer> }> {
  const child = spawn(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), path.join(root, "tests/support/provider-instance.ts")], {
    cwd: root,
    env: { ...process.env, VESTIBULE_LOG: "silent", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const lines = createInterface({ input: child.stdout });
  const seen: string[] = [];
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const onLine = (line: string) => {
        seen.push(line);
        if (!line.startsWith("{")) return;
        lines.off("line", onLine);
        resolve(JSON.parse(line));
      };
      lines.on("line", onLine);
      child.once("exit", (code) => reject(new Error(`instance exited ${code}: ${err}${seen.join("\n")}`)));
    });
  await next();
  return {
    go: async () => {
      const answer = next();
      child.stdin.write("go\n");
      return (await answer) as Answer;
    },
  };
}
