// One deployment as deploy/README.md builds it, on loopback: PostgreSQL (a fresh database), two
// `npm start` instances with deploy/vestibule.env, nginx with deploy/nginx/vestibule.conf and a
// certificate from a CA made now, the SMTP sink and the test IdP. stop() takes all of it down;
// tests/support/deploy.ts also kills every process group at exit, should a suite fail halfway.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "../support/browser";
import { seedUser } from "../support/seed-user";
import {
  deployEnv,
  makeCertificates,
  renderSite,
  startInstance,
  startNginx,
  type Certificates,
  type Instance,
  type RunningNginx,
} from "../support/deploy";
import { startTestIdp, TEST_CLIENT, type TestIdp } from "../support/idp";
import { ADMIN_URL, databaseUrl, runDatabasePrefix } from "../support/postgres";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";

export type Stack = {
  /** https://localhost:<port>: the public origin (AUTH_URL). */
  origin: string;
  httpsPort: number;
  httpPort: number;
  certs: Certificates;
  dir: string;
  /** What deploy/nginx/vestibule.conf serves /.well-known/acme-challenge/ from (/var/www/letsencrypt). */
  webroot: string;
  a: Instance;
  b: Instance;
  nginx: RunningNginx;
  sink: SmtpSink;
  idp: TestIdp;
  database: string;
  direct: pg.Client;
  stop: () => Promise<void>;
};

export async function startStack(name: string, extraEnv: Record<string, string> = {}): Promise<Stack> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "vestibule-deploy-"));
  const database = `${runDatabasePrefix()}deploy_${name}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();

  const parts: Partial<Stack> = { dir, database };
  const stop = async () => {
    await parts.nginx?.stop();
    await Promise.all([parts.a?.stop(), parts.b?.stop()]);
    await parts.direct?.end().catch(() => {});
    await parts.sink?.close();
    await parts.idp?.stop();
    const cleanup = new pg.Client({ connectionString: ADMIN_URL });
    await cleanup.connect();
    await cleanup.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await cleanup.end();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [httpsPort, httpPort, portA, portB] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const origin = `https://localhost:${httpsPort}`;
    parts.certs = makeCertificates(path.join(dir, "tls"));
    [parts.sink, parts.idp] = await Promise.all([startSmtpSink(), startTestIdp({ clients: [{ ...TEST_CLIENT, redirectUris: [`${origin}/auth/callback/oidc`] }] })]);
    const env = {
      ...deployEnv({
        AUTH_URL: origin,
        AUTH_SECRET: "vestibule-deploy-test-secret-0123456789abcdef",
        DATABASE_URL: databaseUrl(ADMIN_URL, database),
        AUTH_EMAIL_SERVER: parts.sink.url,
        AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>",
      }),
      AUTH_OIDC_ISSUER: parts.idp.issuer,
      AUTH_OIDC_ID: TEST_CLIENT.clientId,
      AUTH_OIDC_SECRET: TEST_CLIENT.clientSecret,
      AUTH_OIDC_NAME: "Test IdP",
      VESTIBULE_DATA_DIR: path.join(dir, "data"),
      ...extraEnv,
    };
    // A first: it applies the migrations; B finds them applied.
    parts.a = await startInstance(portA, env);
    parts.b = await startInstance(portB, env);
    const webroot = path.join(dir, "letsencrypt");
    const site = renderSite({ https: httpsPort, http: httpPort, instances: [portA, portB] }, parts.certs, { logDir: path.join(dir, "nginx", "logs"), webroot });
    parts.webroot = webroot;
    parts.nginx = await startNginx(path.join(dir, "nginx"), site, httpsPort);
    parts.direct = new pg.Client({ connectionString: databaseUrl(ADMIN_URL, database) });
    await parts.direct.connect();
    return { ...(parts as Stack), origin, httpsPort, httpPort, stop };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}

/**
 * A password user in the stack's database, as `npm run user:add` makes one (tests/support/seed-user.ts;
 * the command itself runs in tests/browser/production-server.test.ts).
 */
export async function addUserTo(stack: Stack, user: { email: string; password: string; name?: string }) {
  await seedUser(stack.a, user);
}
