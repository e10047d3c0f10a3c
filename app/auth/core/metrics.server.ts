// GET /metrics in the Prometheus text format (ADR 076). The auth series are counted
// from the audit trail as each event is written (accounts/audit.server.ts calls countEvent), so a
// metric and the audit rows never disagree; the request durations are observed once per request
// by the root middleware, e-mail transport failures where the transport is picked
// (mail/mailer.server.ts). Every label value is a bounded name — a method, a limit, a purpose, a
// route pattern — never an address, an id or a raw URL: labelValue() turns anything else into "other".
import { createRequire } from "node:module";
import client from "prom-client";
import { poolUse } from "../../db/client.server";
import { getConfig } from "./config.server";
import { constantTimeEqual, sha256hex } from "./crypto.server";

const PREFIX = "vestibule_";

type Metrics = {
  registry: client.Registry;
  signins: client.Counter<"method" | "outcome">;
  rateLimited: client.Counter<"limit">;
  emailsSent: client.Counter<"purpose">;
  emailsFailed: client.Counter<"purpose">;
  sessionsCreated: client.Counter<"strategy">;
  sessionsEnded: client.Counter<"strategy" | "reason">;
  cookiesRefused: client.Counter<"cookie" | "reason">;
  oauthTokens: client.Counter<"grant" | "outcome">;
  backchannelLogouts: client.Counter<"outcome">;
  requestDuration: RequestDurations;
};

// Kept on globalThis: the Vite dev server re-evaluates this module after an edit, and a second
// registry would start every counter from zero (and the default metrics cannot be registered twice).
const HELD = Symbol.for("vestibule.metrics");
const holder = globalThis as typeof globalThis & { [HELD]?: Metrics };

/**
 * prom-client's default metrics, every one but nodejs_gc_duration_seconds (ADR 100). That one
 * listens to every collection through a PerformanceObserver, and Node builds each collection's
 * entry as old-generation garbage: about 6 KB a collection, 230 B a request at the young
 * collections' pace under load, which filled the old generation to a Mark-Compact (a 5–7 ms pause)
 * every 8 s at 5 000 req/s; without it, none in minutes. prom-client has no switch for one
 * default metric, so each is registered from its own module (the list is prom-client's).
 */
const UNOBSERVED_DEFAULT_METRICS = new Set(["gc"]);
type DefaultMetric = (registry: client.Registry, config: { prefix: string; eventLoopMonitoringPrecision: number }) => void;
// Loaded with this module, not at the first request: a prom-client whose files moved stops the
// start (the server imports this module before it listens) instead of failing every request.
const DEFAULT_METRICS: readonly DefaultMetric[] = (() => {
  const requireFromHere = createRequire(import.meta.url);
  const names = (client.collectDefaultMetrics as unknown as { metricsList: string[] }).metricsList;
  return names.filter((name) => !UNOBSERVED_DEFAULT_METRICS.has(name)).map((name) => requireFromHere(`prom-client/lib/metrics/${name}`) as DefaultMetric);
})();

function registerDefaultMetrics(registry: client.Registry) {
  // collectDefaultMetrics' own default precision for the event-loop delay monitor.
  for (const register of DEFAULT_METRICS) register(registry, { prefix: PREFIX, eventLoopMonitoringPrecision: 10 });
}

function create(): Metrics {
  const registry = new client.Registry();
  registerDefaultMetrics(registry);
  const registers = [registry];
  const metrics: Metrics = {
    registry,
    signins: new client.Counter({
      name: `${PREFIX}signins_total`,
      help: "Sign-in attempts by method (provider id) and outcome (success, failure, second-factor-failure), as in the audit trail.",
      labelNames: ["method", "outcome"],
      registers,
    }),
    rateLimited: new client.Counter({
      name: `${PREFIX}rate_limit_refusals_total`,
      help: "Requests refused by a rate limit, by limit name.",
      labelNames: ["limit"],
      registers,
    }),
    emailsSent: new client.Counter({
      name: `${PREFIX}emails_sent_total`,
      help: "E-mails handed to the transport, by purpose (the audit trail's email-sent events).",
      labelNames: ["purpose"],
      registers,
    }),
    emailsFailed: new client.Counter({
      name: `${PREFIX}emails_failed_total`,
      help: "E-mails the transport did not accept, by purpose.",
      labelNames: ["purpose"],
      registers,
    }),
    sessionsCreated: new client.Counter({
      name: `${PREFIX}sessions_created_total`,
      help: "Sessions created, by session strategy.",
      labelNames: ["strategy"],
      registers,
    }),
    sessionsEnded: new client.Counter({
      name: `${PREFIX}sessions_ended_total`,
      help: "Sessions ended, by session strategy and reason (signout, revoked, admin, disabled, deleted, password-change, password-reset, email-change, expired).",
      labelNames: ["strategy", "reason"],
      registers,
    }),
    cookiesRefused: new client.Counter({
      name: `${PREFIX}cookies_refused_total`,
      help: "Sealed cookies refused, by cookie (session, device, two-factor, email-code, passkey-challenge, oauth-check) and reason (malformed, no-key, expired, invalid) (ADR 109).",
      labelNames: ["cookie", "reason"],
      registers,
    }),
    oauthTokens: new client.Counter({
      name: `${PREFIX}oauth_tokens_total`,
      help: "Token endpoint answers of the OAuth provider, by grant (authorization_code, refresh_token, client_credentials, device_code, other) and outcome (issued, refused).",
      labelNames: ["grant", "outcome"],
      registers,
    }),
    backchannelLogouts: new client.Counter({
      name: `${PREFIX}oauth_backchannel_logouts_total`,
      help: "Back-channel logout tokens of the OAuth provider, by outcome (sent, retry, given_up).",
      labelNames: ["outcome"],
      registers,
    }),
    requestDuration: new RequestDurations(`${PREFIX}http_request_duration_seconds`),
  };
  registry.registerMetric(metrics.requestDuration as unknown as client.Metric);
  // The PostgreSQL pool, read at each scrape; no series on SQLite or before the first query (the
  // `pool` label is what lets a gauge show nothing rather than 0).
  const poolGauge = (name: string, help: string, read: (u: NonNullable<ReturnType<typeof poolUse>>) => number) =>
    new client.Gauge({
      name: `${PREFIX}db_pool_${name}`,
      help,
      labelNames: ["pool"],
      registers,
      collect() {
        const use = poolUse();
        if (use) this.set({ pool: "main" }, read(use));
        else this.reset();
      },
    });
  poolGauge("connections", "PostgreSQL connections the pool holds (in use and idle).", (u) => u.total);
  poolGauge("idle", "PostgreSQL connections idle in the pool.", (u) => u.idle);
  poolGauge("waiting", "Queries waiting for a PostgreSQL connection.", (u) => u.waiting);
  poolGauge("max", "DATABASE_POOL_MAX.", (u) => u.max);
  return metrics;
}

function metrics(): Metrics {
  holder[HELD] ??= create();
  return holder[HELD];
}

const LABEL = /^[a-z0-9][a-z0-9_.-]{0,39}$/i;

/** A label value from something the code named (a provider id, a limit, a purpose); anything else is "other". */
export function labelValue(value: unknown): string {
  return typeof value === "string" && LABEL.test(value) && !value.includes("@") ? value : "other";
}

/**
 * Why an event ended sessions, as the sessions_ended_total reason. The events marked `counted`
 * carry how many in detail.count (none: nothing ended); the others end one unless they say.
 * "sessions-expired" is no audit event: the session reader and the cleanup report what expired
 * as they delete it (ADR 086).
 */
const ENDED_BY: Record<string, { reason: string; counted?: true }> = {
  signout: { reason: "signout" },
  "session-revoked": { reason: "revoked" },
  "sessions-ended": { reason: "admin" },
  "user-disabled": { reason: "disabled" },
  "user-deleted": { reason: "deleted", counted: true },
  "password-changed": { reason: "password-change", counted: true },
  "password-reset": { reason: "password-reset", counted: true },
  "email-changed": { reason: "email-change", counted: true },
  "sessions-expired": { reason: "expired", counted: true },
  "security-report": { reason: "reported" },
};

/**
 * Counts one audit event that was just written (accounts/audit.server.ts): the one place the auth
 * series move. Events without a series are ignored.
 */
export function countEvent(type: string, detail: Record<string, unknown> | undefined) {
  const m = metrics();
  const d = detail ?? {};
  const strategy = () => labelValue(typeof d.strategy === "string" ? d.strategy : getConfig().sessionStrategy);
  switch (type) {
    case "signin":
      m.signins.inc({ method: labelValue(d.provider), outcome: "success" });
      m.sessionsCreated.inc({ strategy: strategy() });
      return;
    case "signin-failed":
      m.signins.inc({ method: labelValue(d.provider ?? "unknown"), outcome: "failure" });
      return;
    case "two-factor-failed":
      // The second-factor page's failures; a wrong code on /account is no sign-in.
      if (typeof d.provider === "string") m.signins.inc({ method: labelValue(d.provider), outcome: "second-factor-failure" });
      return;
    case "rate-limited":
      m.rateLimited.inc({ limit: labelValue(d.bucket) });
      return;
    case "email-sent":
      m.emailsSent.inc({ purpose: labelValue(d.purpose) });
      return;
  }
  const ended = ENDED_BY[type];
  if (ended) {
    const count = typeof d.count === "number" && Number.isInteger(d.count) && d.count >= 0 ? d.count : ended.counted ? 0 : 1;
    if (count > 0) m.sessionsEnded.inc({ strategy: strategy(), reason: ended.reason }, count);
  }
}

/** An e-mail the transport refused (mail/mailer.server.ts). */
export function countEmailFailed(purpose: string | undefined) {
  metrics().emailsFailed.inc({ purpose: labelValue(purpose ?? "other") });
}

/** A sealed cookie refused (sealed-cookies.server.ts): both labels come from fixed lists. */
const OAUTH_GRANTS: Record<string, string> = {
  authorization_code: "authorization_code",
  refresh_token: "refresh_token",
  client_credentials: "client_credentials",
  "urn:ietf:params:oauth:grant-type:device_code": "device_code",
};

/** One answer of the OAuth provider's token endpoint (docs/features/provider.md): tokens issued or refused. */
export function countOAuthToken(grantType: unknown, outcome: "issued" | "refused") {
  metrics().oauthTokens.inc({ grant: (typeof grantType === "string" && OAUTH_GRANTS[grantType]) || "other", outcome });
}

/** One try of a back-channel logout token (provider/backchannel.server.ts). */
export function countBackchannelLogout(outcome: "sent" | "retry" | "given_up") {
  metrics().backchannelLogouts.inc({ outcome });
}

export function countCookieRefused(cookie: string, reason: string) {
  metrics().cookiesRefused.inc({ cookie: labelValue(cookie), reason: labelValue(reason) });
}

/** One request answered: `route` is the matched route pattern (bounded by the route table). */
export function observeRequest(route: string, method: string, status: number, seconds: number) {
  metrics().requestDuration.observe(route, method, status, seconds);
}

const DURATION_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
type DurationSeries = { route: string; method: string; status: string; counts: Float64Array; sum: number };

/**
 * The request-duration histogram, written here rather than with prom-client's Histogram: its
 * observe hashes a label object per call (microseconds), where this is one Map lookup by a
 * string and a short bucket scan — it runs once for every request (ADR 076). The cumulative
 * buckets are built only at a scrape. Registered with the registry as a metric of type histogram.
 */
class RequestDurations {
  readonly type = "histogram";
  readonly help = "Time to the response headers, by route pattern, method and status class.";
  readonly aggregator = "sum";
  private series = new Map<string, DurationSeries>();
  constructor(readonly name: string) {}

  observe(pattern: string, rawMethod: string, statusCode: number, seconds: number) {
    const method = METHODS.has(rawMethod) ? rawMethod : "other";
    const key = `${pattern} ${method} ${statusCode}`;
    let s = this.series.get(key);
    if (!s) {
      // React Router says "auth/csrf", the server's fast path "/auth/session": one spelling.
      const route = pattern.startsWith("/") ? pattern : `/${pattern}`;
      s = { route, method, status: `${Math.floor(statusCode / 100)}xx`, counts: new Float64Array(DURATION_BOUNDS.length + 1), sum: 0 };
      this.series.set(key, s);
    }
    let i = 0;
    while (i < DURATION_BOUNDS.length && seconds > DURATION_BOUNDS[i]!) i++;
    s.counts[i]!++;
    s.sum += seconds;
  }

  /** prom-client's MetricObjectWithValues: _bucket (cumulative, with le), _sum and _count per series. */
  async get() {
    // Status codes of one class share a series in the output: merged here, at the scrape.
    const merged = new Map<string, DurationSeries>();
    for (const s of this.series.values()) {
      const key = `${s.route} ${s.method} ${s.status}`;
      const into = merged.get(key);
      if (!into) merged.set(key, { ...s, counts: Float64Array.from(s.counts) });
      else {
        into.sum += s.sum;
        for (let i = 0; i < s.counts.length; i++) into.counts[i]! += s.counts[i]!;
      }
    }
    const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
    for (const s of merged.values()) {
      const labels = { route: s.route, method: s.method, status: s.status };
      let cumulative = 0;
      for (let i = 0; i <= DURATION_BOUNDS.length; i++) {
        cumulative += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: i < DURATION_BOUNDS.length ? DURATION_BOUNDS[i]! : "+Inf" }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: cumulative });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset() {
    this.series.clear();
  }
}

/**
 * The scrape: the text format for a request carrying `Authorization: Bearer <METRICS_TOKEN>`,
 * null for every other request (the caller answers its ordinary 404) and whenever METRICS_TOKEN is
 * unset. Both sides are hashed before the constant-time comparison, so neither the token's
 * length nor its bytes show in the time taken.
 */
export async function metricsResponse(request: Request): Promise<Response | null> {
  const token = getConfig().metricsToken;
  if (!token) return null;
  const header = request.headers.get("Authorization") ?? "";
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match || !constantTimeEqual(sha256hex(match[1]!), sha256hex(token))) return null;
  const { registry } = metrics();
  return new Response(await registry.metrics(), {
    status: 200,
    headers: { "Content-Type": registry.contentType, "Cache-Control": "no-store" },
  });
}

/** Tests: every series back to zero. */
export function resetMetrics() {
  holder[HELD]?.registry.resetMetrics();
}
