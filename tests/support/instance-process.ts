// More instances of the app for a test, each its own process on the test's database (the
// environment is the test's): tests/support/signin-instance.ts, tests/support/refresh-instance.ts.
// The test starts them, waits until every one has loaded the app and says so, then tells them all
// at once to go — the same moment for each, whatever the machine's load, with no clock to guess —
// and reads the one JSON line each prints. No vitest here: the instance scripts import it too.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const READY = "instance-ready";

/** In an instance script: says it has loaded, then waits for the test's word to go. */
export async function readyThenGo(): Promise<void> {
  const go = new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  console.log(READY);
  await go;
  process.stdin.pause();
}

type Instance = { child: ChildProcessWithoutNullStreams; ready: Promise<void>; result: Promise<Record<string, unknown>> };

function start(script: string, env: Record<string, string>, resultKey: string): Instance {
  // tsx as a loader in this one process (its command line would start a second node).
  const child = spawn(process.execPath, ["--import", "tsx", path.join(root, script)], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let onReady: () => void = () => {};
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const ready = new Promise<void>((resolve, reject) => {
    onReady = resolve;
    void exited.then((code) => reject(new Error(`${script} exited ${code} before it was ready: ${err}${out}`)));
  });
  child.stdout.on("data", (d) => {
    out += d;
    if (out.split("\n").includes(READY)) onReady();
  });
  child.stderr.on("data", (d) => (err += d));
  const result = exited.then((code) => {
    const line = out.split("\n").find((l) => l.startsWith(`{"${resultKey}"`));
    if (code !== 0 || !line) throw new Error(`${script} exited ${code}: ${err}${out}`);
    return JSON.parse(line) as Record<string, unknown>;
  });
  return { child, ready, result };
}

/**
 * Runs `copies` instances of `script` side by side and returns what each printed under
 * `resultKey` (its JSON line `{"<resultKey>": …}`), once all have loaded and been told to go together.
 */
export async function runSideBySide<T>(script: string, env: Record<string, string>, resultKey: string, copies = 2): Promise<T[]> {
  const instances = Array.from({ length: copies }, () => start(script, env, resultKey));
  try {
    await Promise.all(instances.map((i) => i.ready));
  } catch (error) {
    for (const i of instances) i.child.kill("SIGKILL");
    throw error;
  }
  for (const i of instances) i.child.stdin.end("go\n");
  return Promise.all(instances.map(async (i) => (await i.result)[resultKey] as T));
}
