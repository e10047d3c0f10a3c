// The deployment of deploy/ run for real (docs/decisions/066): Debian's nginx with
// deploy/nginx/vestibule.conf (only ports, listen addresses and file paths changed), a CA and a
// server certificate made with openssl at test time, the CA trusted by Chromium through an NSS
// database in the browser's own HOME, and `npm start` instances started with deploy/vestibule.env.
// Every process started here is in a process group of its own and is killed with its group when
// the test process exits, whatever state the suite failed in.
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import https from "node:https";
import { connect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CHROMIUM_PATH } from "./chromium";
import { parseSystemdEnvironmentFile } from "./systemd-env";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const DEPLOY_DIR = path.join(root, "deploy");

// ---- Cleanup -----------------------------------------------------------------------------------

const groups = new Set<number>();
function killGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
const killAll = () => {
  for (const pid of groups) killGroup(pid, "SIGKILL");
};
process.once("exit", killAll);
// A worker stopped by a signal does not run "exit" handlers: kill the groups, then die of it.
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}

/** Spawns `command` in a process group of its own, killed with the test process at the latest. */
function spawnGroup(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  groups.add(child.pid!);
  child.once("exit", () => groups.delete(child.pid!));
  return child;
}

// ---- What the suite needs ----------------------------------------------------------------------

export function nginxBinary(): string | null {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/sbin"]) {
    if (dir && existsSync(path.join(dir, "nginx"))) return path.join(dir, "nginx");
  }
  return null;
}

function onPath(name: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).status === 0;
}

/**
 * null when nginx, openssl, certutil and Chromium are there; otherwise why not (the suite is
 * skipped with the reason printed), or a throw in CI, where scripts/setup.sh installs them.
 */
export function deployToolsMissing(suite: string, { browser = true } = {}): string | null {
  const missing = [
    nginxBinary() ? null : "nginx (apt-get install nginx)",
    onPath("openssl") ? null : "openssl",
    !browser || onPath("certutil") ? null : "certutil (apt-get install libnss3-tools)",
    !browser || existsSync(CHROMIUM_PATH) ? null : `Chromium at ${CHROMIUM_PATH}`,
  ].filter((m): m is string => m !== null);
  if (missing.length === 0) return null;
  const reason = `missing ${missing.join(", ")}`;
  if (process.env.CI === "true") throw new Error(`${reason}; CI requires it for the ${suite}`);
  console.log(`${reason}: ${suite} skipped`);
  return reason;
}

// ---- Certificates ------------------------------------------------------------------------------

export type Certificates = { ca: string; caPath: string; certPath: string; keyPath: string };

/** A CA and a server certificate it signed, for localhost, 127.0.0.1 and ::1 (P-256, 2 days). */
export function makeCertificates(dir: string): Certificates {
  mkdirSync(dir, { recursive: true });
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=Vestibule deploy test CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", file("ca.key"), "-out", file("ca.pem"));
  const certs = { ca: readFileSync(file("ca.pem"), "utf8"), caPath: file("ca.pem"), certPath: file("server.pem"), keyPath: file("server.key") };
  renewCertificate(certs);
  return certs;
}

/**
 * A new key and server certificate from the same CA written over certs.certPath and keyPath, as a
 * renewal does (certbot's live/ names stay, their targets change); its serial number, in hex.
 */
export function renewCertificate(certs: Certificates): string {
  const dir = path.dirname(certs.caPath);
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=localhost", "-keyout", file("server.key.new"), "-out", file("server.csr"));
  writeFileSync(file("server.ext"), [
    "basicConstraints=critical,CA:FALSE",
    "keyUsage=critical,digitalSignature",
    "extendedKeyUsage=serverAuth",
    "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1",
  ].join("\n"));
  // A random serial each time (no serial file), as a public CA gives; its first digit 4, so that
  // no leading zero or sign byte makes openssl and Node write the same number differently.
  const serial = `4${randomBytes(16).toString("hex").slice(1)}`;
  openssl("x509", "-req", "-in", file("server.csr"), "-CA", certs.caPath, "-CAkey", file("ca.key"), "-set_serial", `0x${serial}`, "-days", "2", "-extfile", file("server.ext"), "-out", file("server.pem.new"));
  renameSync(file("server.key.new"), certs.keyPath);
  renameSync(file("server.pem.new"), certs.certPath);
  return execFileSync("openssl", ["x509", "-in", certs.certPath, "-noout", "-serial"], { encoding: "utf8" }).trim().replace(/^serial=/, "").toUpperCase();
}

/** The serial number (hex, upper case) of the certificate nginx shows a new TLS connection for localhost. */
export function servedSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: "127.0.0.1", port, servername: "localhost", ca });
    socket.once("secureConnect", () => {
      const serial = socket.getPeerCertificate().serialNumber.toUpperCase();
      socket.destroy();
      resolve(serial);
    });
    socket.once("error", reject);
  });
}

/**
 * An NSS database in `home` (Chromium on Linux reads $HOME/.pki/nssdb) trusting the CA to identify
 * web sites. This is trust, not an ignored error: a certificate the CA did not sign still fails.
 */
export function trustCaForChromium(home: string, caPath: string) {
  const db = path.join(home, ".pki", "nssdb");
  mkdirSync(db, { recursive: true });
  execFileSync("certutil", ["-N", "-d", `sql:${db}`, "--empty-password"], { stdio: "pipe" });
  execFileSync("certutil", ["-A", "-d", `sql:${db}`, "-n", "Vestibule deploy test CA", "-t", "C,,", "-i", caPath], { stdio: "pipe" });
}

// ---- nginx -------------------------------------------------------------------------------------

export type SitePorts = { https: number; http: number; instances: [number, number] };

/**
 * deploy/nginx/vestibule.conf with its ports, listen addresses (loopback: the machine is shared),
 * host name (localhost, the name the test CA's certificate carries) and file paths replaced. The
 * names the instances are sent (Host, X-Forwarded-Host) get the https port the test's nginx
 * listens on, which is 443 — said by no port — in production. Each replaced text must be in the
 * file: a renamed directive fails here rather than leaving the production value in the test.
 */
export function renderSite(ports: SitePorts, certs: Certificates, paths: { logDir: string; webroot: string }): string {
  let site = readFileSync(path.join(DEPLOY_DIR, "nginx/vestibule.conf"), "utf8");
  const replacements: [string, string][] = [
    ["listen 80", `listen 127.0.0.1:${ports.http}`],
    ["listen [::]:80", `listen [::1]:${ports.http}`],
    ["listen 443", `listen 127.0.0.1:${ports.https}`],
    ["listen [::]:443", `listen [::1]:${ports.https}`],
    ["server 127.0.0.1:3001 ", `server 127.0.0.1:${ports.instances[0]} `],
    ["server 127.0.0.1:3002 ", `server 127.0.0.1:${ports.instances[1]} `],
    ["server_name vestibule.example.com;", "server_name localhost;"],
    ["proxy_set_header Host $server_name;", `proxy_set_header Host $server_name:${ports.https};`],
    ["proxy_set_header X-Forwarded-Host $server_name;", `proxy_set_header X-Forwarded-Host $server_name:${ports.https};`],
    ["/etc/letsencrypt/live/vestibule.example.com/fullchain.pem", certs.certPath],
    ["/etc/letsencrypt/live/vestibule.example.com/privkey.pem", certs.keyPath],
    ["/var/log/nginx/", `${paths.logDir}/`],
    ["/var/www/letsencrypt", paths.webroot],
  ];
  for (const [from, to] of replacements) {
    if (!site.includes(from)) throw new Error(`deploy/nginx/vestibule.conf no longer contains "${from}"`);
    site = site.split(from).join(to);
  }
  return site;
}

export type RunningNginx = {
  dir: string;
  /**
   * A folder holding an `nginx` command that is this nginx (its prefix, configuration and error
   * log given): with it first on PATH, a script's `nginx -t` and `nginx -s reload` act on the
   * test's nginx as they would on the system's.
   */
  binDir: string;
  accessLog: () => string;
  errorLog: () => string;
  stop: () => Promise<void>;
};

/**
 * nginx as the test's user with its own prefix, pid file, temporary folders and error log in
 * `dir`, in the foreground, serving `site` (renderSite) inside a minimal http block.
 */
export async function startNginx(dir: string, site: string, httpsPort: number): Promise<RunningNginx> {
  const binary = nginxBinary()!;
  for (const sub of ["logs", "tmp"]) mkdirSync(path.join(dir, sub), { recursive: true });
  writeFileSync(path.join(dir, "vestibule.conf"), site);
  const main = [
    "daemon off;",
    "master_process on;",
    "worker_processes 2;",
    // As root, the workers would otherwise run as nobody and could not read this folder.
    process.getuid?.() === 0 ? "user root;" : "",
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/logs/error.log warn;`,
    "events { worker_connections 1024; }",
    "http {",
    `  access_log ${dir}/logs/default.access.log;`,
    // What Debian's /etc/nginx/nginx.conf sets at this level around sites-enabled/: the site file
    // must neither repeat these here nor rely on them.
    "  ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;",
    "  ssl_prefer_server_ciphers on;",
    `  client_body_temp_path ${dir}/tmp/body;`,
    `  proxy_temp_path ${dir}/tmp/proxy;`,
    `  fastcgi_temp_path ${dir}/tmp/fastcgi;`,
    `  uwsgi_temp_path ${dir}/tmp/uwsgi;`,
    `  scgi_temp_path ${dir}/tmp/scgi;`,
    `  include ${dir}/vestibule.conf;`,
    "}",
  ].join("\n");
  writeFileSync(path.join(dir, "nginx.conf"), main);
  const args = ["-p", dir, "-c", path.join(dir, "nginx.conf"), "-e", path.join(dir, "logs/error.log")];
  const check = spawnSync(binary, [...args, "-t"], { encoding: "utf8" });
  if (check.status !== 0) throw new Error(`nginx -t refused the rendered site:\n${check.stderr}`);
  const binDir = path.join(dir, "bin");
  mkdirSync(binDir, { recursive: true });
  writeFileSync(path.join(binDir, "nginx"), `#!/bin/sh\nexec ${[binary, ...args].map((a) => `'${a}'`).join(" ")} "$@"\n`);
  chmodSync(path.join(binDir, "nginx"), 0o755);
  const child = spawnGroup(binary, args);
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  await waitForPort(httpsPort, () => (child.exitCode !== null ? `nginx exited with ${child.exitCode}: ${output}` : null));
  const read = (name: string) => (existsSync(path.join(dir, "logs", name)) ? readFileSync(path.join(dir, "logs", name), "utf8") : "");
  return {
    dir,
    binDir,
    accessLog: () => read("vestibule.access.log"),
    errorLog: () => read("vestibule.error.log") + read("error.log"),
    stop: () => stopGroup(child, "SIGQUIT"),
  };
}

async function waitForPort(port: number, failed: () => string | null, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const why = failed();
    if (why) throw new Error(why);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listened on port ${port} within ${timeoutMs} ms`);
}

/** Signals the group, waits up to 10 s for the leader to exit, then kills the group. */
async function stopGroup(child: ChildProcess, signal: NodeJS.Signals) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  killGroup(child.pid!, signal);
  const timer = new Promise((r) => setTimeout(r, 10_000));
  await Promise.race([exited, timer]);
  killGroup(child.pid!, "SIGKILL");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 2_000))]);
}

// ---- Instances ---------------------------------------------------------------------------------

/**
 * deploy/vestibule.env as the instances read it (systemd's EnvironmentFile: KEY=value lines, #
 * comments, quoted values; tests/support/systemd-env.ts), with `replace` on top. Every value marked "test: replaced" in the file must be given.
 */
export function deployEnv(replace: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  let marked = false;
  const mustReplace: string[] = [];
  for (const line of readFileSync(path.join(DEPLOY_DIR, "vestibule.env"), "utf8").split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "# test: replaced") marked = true;
    if (!trimmed || trimmed.startsWith("#")) continue;
    const [key, value] = Object.entries(parseSystemdEnvironmentFile(trimmed))[0]!;
    env[key] = value;
    if (marked) mustReplace.push(key);
    marked = false;
  }
  const missing = mustReplace.filter((k) => !(k in replace));
  if (missing.length) throw new Error(`deployEnv: deploy/vestibule.env marks ${missing.join(", ")} as replaced by the test`);
  return { ...env, ...replace };
}

export type Instance = {
  port: number;
  url: string;
  env: Record<string, string>;
  pid: () => number;
  logs: () => string;
  /** SIGTERM to the main process, then waits for the exit (the drain included); the exit code. */
  stop: () => Promise<number | null>;
  /** Starts a new process on the same port with the same environment. */
  start: () => Promise<void>;
};

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("AUTH_") || k.startsWith("VITEST") || k === "DATABASE_URL" || k === "VESTIBULE_DATA_DIR") continue;
    env[k] = v;
  }
  return env;
}

/** `npm start`'s server on 127.0.0.1:`port` with `env`; started before it is returned. */
export async function startInstance(port: number, env: Record<string, string>): Promise<Instance> {
  let child: ChildProcess | null = null;
  let output = "";
  const fullEnv = { ...cleanEnv(), ...env, PORT: String(port), HOST: "127.0.0.1" };
  const instance: Instance = {
    port,
    url: `http://127.0.0.1:${port}`,
    env: fullEnv,
    pid: () => child!.pid!,
    logs: () => output,
    async start() {
      const started = spawnGroup(process.execPath, [path.join(root, "server/main.ts")], { cwd: root, env: fullEnv });
      child = started;
      started.stdout!.on("data", (d) => (output += d));
      started.stderr!.on("data", (d) => (output += d));
      const mark = output.length;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`instance on ${port} did not start within 30 s:\n${output.slice(mark)}`)), 30_000);
        const check = () => {
          if (output.slice(mark).includes("listening on")) {
            clearTimeout(timer);
            resolve();
          }
        };
        started.stdout!.on("data", check);
        started.once("exit", (code) => {
          clearTimeout(timer);
          reject(new Error(`instance on ${port} exited with ${code}:\n${output.slice(mark)}`));
        });
      });
    },
    async stop() {
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return running?.exitCode ?? null;
      const exited = new Promise<number | null>((r) => running.once("exit", (code) => r(code)));
      // The main process only, as systemd (KillMode=mixed) and docker stop do; the group is killed
      // only when the process has not exited 20 s later (docs/decisions/106).
      process.kill(running.pid!, "SIGTERM");
      const code = await Promise.race([exited, new Promise<"late">((r) => setTimeout(() => r("late"), 20_000))]);
      if (code === "late") {
        killGroup(running.pid!, "SIGKILL");
        return null;
      }
      return code;
    },
  };
  await instance.start();
  return instance;
}

// ---- An HTTPS client that trusts the test CA ---------------------------------------------------

export type HttpsAnswer = { status: number; headers: Record<string, string | string[] | undefined>; setCookies: string[]; body: string };

/**
 * One HTTPS request (HTTP/1.1) to nginx, trusting only `ca`. `agent` keeps connections between
 * calls (the load loop); errors — a reset connection included — reject.
 */
export function httpsRequest(
  url: string,
  init: { ca: string; method?: string; headers?: Record<string, string>; body?: string | Buffer; agent?: https.Agent; localAddress?: string; timeoutMs?: number; servername?: string },
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: init.method ?? "GET",
        headers: init.headers,
        ca: init.ca,
        agent: init.agent,
        localAddress: init.localAddress,
        timeout: init.timeoutMs ?? 15_000,
        // The TLS name; Node takes it from a Host header when there is one.
        servername: init.servername,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const setCookie = res.headers["set-cookie"];
          resolve({ status: res.statusCode!, headers: res.headers, setCookies: setCookie ?? [], body: Buffer.concat(chunks).toString("utf8") });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${init.timeoutMs ?? 15_000} ms`)));
    req.on("error", reject);
    req.end(init.body);
  });
}
