// Environment → typed configuration. The only module that reads process.env for auth settings.
// Every problem is reported with the variable's name at start (see server/main.ts and the dev
// bootstrap, which call getConfig() before serving), never as a stack trace at the first request.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { parseTrustedProxies, type TrustedProxies } from "./client-address.server";
import { parseLimitOverrides, type LimitTable } from "./limit-table";
import { DEFAULT_SITE_NAME } from "../../site";
import { providerSettings, type ProviderSettings } from "./provider-settings.server";

export const BASE_PATH = "/auth";
/** AUTH_SITE_NAME's longest value, in characters. */
const SITE_NAME_MAX_LENGTH = 100;
/** AUTH_SESSION_MAX_AGE's default and bounds, in seconds (ADR 113). */
export const SESSION_MAX_AGE = 30 * 24 * 60 * 60;
const SESSION_MAX_AGE_RANGE = [300, 365 * 24 * 60 * 60] as const;
/** AUTH_SESSION_UPDATE_AGE's default (0 to the max age; 0 re-issues the session on every request). */
export const SESSION_UPDATE_AGE = 24 * 60 * 60;
export const CHECK_COOKIE_MAX_AGE = 900;
/** Lifetime of the sealed WebAuthn challenge cookie. */
export const CHALLENGE_COOKIE_MAX_AGE = 900;
export const EMAIL_TOKEN_MAX_AGE = 24 * 60 * 60;
/** A forgotten-password link lives one hour, whatever AUTH_EMAIL_MAX_AGE says. */
export const PASSWORD_RESET_LINK_MAX_AGE = 60 * 60;
/** AUTH_EMAIL_CODE_MAX_AGE's default and bounds, in seconds. */
export const EMAIL_CODE_MAX_AGE = 600;
const EMAIL_CODE_MAX_AGE_RANGE = [60, 3600] as const;
/**
 * AUTH_PASSWORD_MIN_LENGTH's default and bounds, in characters: the floor for
 * a password that is the only factor. NIST SP 800-63B-4 asks for 15 there; 8 is its floor for a
 * password used with a second factor (PASSWORD_MIN_LENGTH_WITH_SECOND_FACTOR, ADR 075).
 */
export const PASSWORD_MIN_LENGTH = 15;
export const NIST_SINGLE_FACTOR_MIN_LENGTH = 15;
export const PASSWORD_MIN_LENGTH_WITH_SECOND_FACTOR = 8;
const PASSWORD_MIN_LENGTH_RANGE = [8, 64] as const;
/** A context word shorter than this is not refused inside a password (too many false hits). */
export const CONTEXT_WORD_MIN_LENGTH = 4;
export const DEFAULT_PASSWORD_BREACH_URL = "https://api.pwnedpasswords.com";
/**
 * AUTH_ASSURANCE=aal2's lifetimes (ADR 082): a session idles out after an
 * hour (its max age, rolled at most every five minutes so the idle bound holds within them), no
 * session outlives a day from its sign-in, and an e-mailed link or code lives ten minutes.
 */
export const AAL2_SESSION_IDLE_MAX_AGE = 60 * 60;
export const AAL2_SESSION_UPDATE_AGE = 5 * 60;
export const AAL2_SESSION_ABSOLUTE_MAX_AGE = 24 * 60 * 60;
export const AAL2_EMAIL_MAX_AGE = 10 * 60;
export const ASSURANCE_LEVELS = ["aal1", "aal2"] as const;
export type AssuranceLevel = (typeof ASSURANCE_LEVELS)[number];
export const SESSION_CLOCK_TOLERANCE = 15;
export const OAUTH_CLOCK_TOLERANCE = 10;
/** The time one outbound call to an OAuth provider may take, connection to last byte. */
export const OAUTH_TIMEOUT_MS = 5_000;

export { PRESET_IDS, isLoopbackHost, type AppleSigningKey, type OAuthClientConfig, type PresetClientConfig, type PresetId, type OidcProviderConfig } from "./provider-settings.server";

export type AuthConfig = {
  production: boolean;
  /** First one signs and encrypts; all of them verify and decrypt. */
  secrets: [string, ...string[]];
  /** Public origin from AUTH_URL, e.g. "https://app.example.com"; null: the request's origin. */
  origin: string | null;
  trustHost: boolean;
  /**
   * AUTH_ALLOWED_HOSTS: the hosts (lower case, "name" or "name:port") an origin taken from the
   * request may name when there is no AUTH_URL; null: no list (then AUTH_TRUST_HOST is refused
   * unless AUTH_URL is set). A request naming another host is refused (core/request.server.ts).
   */
  allowedHosts: readonly string[] | null;
  /** AUTH_HSTS_SUBDOMAINS: HSTS (on an https AUTH_URL) covers the host's subdomains too; on unless "false". */
  hstsSubdomains: boolean;
  /** AUTH_TRUSTED_PROXIES: which peers' X-Forwarded-For is believed; null: none (the TCP peer is the client). */
  trustedProxies: TrustedProxies | null;
  basePath: typeof BASE_PATH;
  dataDir: string;
  /** postgresql://… or null for the embedded SQLite database in dataDir. */
  databaseUrl: string | null;
  sessionStrategy: "jwt" | "database";
  /** AUTH_SITE_NAME: the site's name wherever the product names itself. */
  siteName: string;
  sessionMaxAge: number;
  sessionUpdateAge: number;
  /** AUTH_SESSION_ABSOLUTE_MAX_AGE: seconds from sign-in after which no session lives, rolled or not; null: off. */
  sessionAbsoluteMaxAge: number | null;
  /** `federatedSignOut`: AUTH_OIDC_FEDERATED_SIGNOUT=true — signing out also ends the IdP session. */
  oidc: ProviderSettings["oidc"];
  /** AUTH_OIDC_<NAME>_*: further OpenID providers, id = the name in lower case. */
  oidcProviders: ProviderSettings["oidcProviders"];
  presets: ProviderSettings["presets"];
  /** SMTP settings; null → the dev outbox outside production, e-mail sign-in off in production. */
  email: { server: string; from: string } | null;
  emailConfirm: boolean;
  emailTokenMaxAge: number;
  credentials: boolean;
  /** AUTH_PASSKEYS: passkey (WebAuthn) sign-in and registration; on unless "false". */
  passkeys: boolean;
  /** AUTH_SIGNUP: visitors may create a password account at /auth/signup (dev on, production off). */
  signup: boolean;
  /** AUTH_PASSWORD_MIN_LENGTH: shortest password accepted when one is chosen, in code points after NFKC. */
  passwordMinLength: number;
  /**
   * Words no chosen password may contain (lower case, each at least CONTEXT_WORD_MIN_LENGTH):
   * AUTH_PASSWORD_CONTEXT_WORDS plus the site's name and AUTH_URL's host and its labels.
   */
  passwordContextWords: readonly string[];
  /** AUTH_PASSWORD_BREACH_CHECK=hibp: the range API's base URL (AUTH_PASSWORD_BREACH_URL); null: off. */
  passwordBreachCheck: { url: string } | null;
  /** AUTH_EMAIL_CODE: e-mailed links also carry a 6-digit code (on by default). */
  emailCode: boolean;
  /** AUTH_EMAIL_CODE_MAX_AGE, in seconds; never longer than the link it goes with. */
  emailCodeMaxAge: number;
  /** How long outbound calls to OAuth providers may take (OAUTH_TIMEOUT_MS; tests lower it). */
  oauthTimeoutMs: number;
  /** Limits, each overridable by AUTH_RATE_LIMIT_<NAME>=<count>/<seconds>. */
  rateLimits: LimitTable;
  /** LOG_LEVEL and LOG_REQUESTS; core/log.server.ts reads them through logSettings(). */
  log: LogSettings;
  /** AUTH_EVENT_RETENTION_DAYS: how long the audit trail keeps an event; older ones are cleaned up. */
  authEventRetentionDays: number;
  /** DATABASE_POOL_MAX: PostgreSQL connections one instance may hold. */
  databasePoolMax: number;
  /** DATABASE_TIMEOUT_MS: the longest a PostgreSQL connection or query may take before it fails as "database unavailable". */
  databaseTimeoutMs: number;
  /** AUTH_REAUTH_MAX_AGE: seconds after a session's sign-in during which it may change the account's security (ADR 058). */
  reauthMaxAge: number;
  /** AUTH_ADMIN_REAUTH_MAX_AGE: seconds after a session's sign-in during which it may read the admin console (ADR 110). */
  adminReauthMaxAge: number;
  /** AUTH_SECURITY_EMAILS: the owner is told of each security change by e-mail (on unless "false"; ADR 059). */
  securityEmails: boolean;
  /** METRICS_TOKEN: the bearer token GET /metrics asks for; null: /metrics answers 404 (ADR 076). */
  metricsToken: string | null;
  /** AUTH_ASSURANCE: "aal2" shortens the lifetimes above and turns requireMfa on by default (ADR 082). */
  assurance: AssuranceLevel;
  /** AUTH_REQUIRE_MFA: a signed-in user without a second factor must set one up before any other page answers (ADR 082). */
  requireMfa: boolean;
  /** A forgotten-password link's lifetime: an hour, ten minutes under aal2. */
  passwordResetLinkMaxAge: number;
  /** AUTH_ORGANIZATIONS: organizations, their members, invitations and domains (ADR 146); off: every /orgs URL is 404. */
  organizations: boolean;
  /** AUTH_ORGANIZATIONS_CREATE: who may create an organization: any signed-in user with a verified address, or admins only. */
  organizationsCreate: "all" | "admins";
  /** AUTH_DNS_SERVERS: the resolvers domain verification asks ("host" or "host:port"); null: the system's (ADR 149). */
  dnsServers: readonly string[] | null;
  /** AUTH_PROVIDER=true: Vestibule is an OAuth 2.1 authorization server and OpenID provider (docs/features/provider.md); null: off, its URLs answer 404. */
  provider: ProviderConfig | null;
};

/** The OAuth provider's settings (docs/features/provider.md, ADR 130-139). */
export type ProviderConfig = {
  /** The issuer: AUTH_URL's origin, never the request's. */
  issuer: string;
  /** AUTH_PROVIDER_REGISTRATION=open: anyone may register a public client (RFC 7591). */
  registration: "open" | "off";
  /** AUTH_PROVIDER_CLIENT_METADATA_DOCUMENTS: a client_id that is an https: URL names its metadata document. */
  clientMetadataDocuments: boolean;
  /** Where access tokens may be used (RFC 8707): AUTH_PROVIDER_RESOURCES plus AUTH_URL/api and AUTH_URL/mcp, normalised. */
  resources: readonly string[];
  /** AUTH_PROVIDER_ACCESS_TOKEN_TTL, seconds. */
  accessTokenTtl: number;
  /** AUTH_PROVIDER_REFRESH_GRACE, seconds during which a rotated refresh token gets the same answer again; 0: off. */
  refreshGrace: number;
  /** AUTH_PROVIDER_SUBJECT: `public` (every app sees the user's id) or `pairwise` (one `sub` per app host, ADR 163). */
  subject: "public" | "pairwise";
};
/** AUTH_PROVIDER_ACCESS_TOKEN_TTL's default and bounds, in seconds. */
export const PROVIDER_ACCESS_TOKEN_TTL = 600;
const PROVIDER_ACCESS_TOKEN_TTL_RANGE = [60, 86_400] as const;
/** AUTH_PROVIDER_REFRESH_GRACE's default and bounds, in seconds. */
export const PROVIDER_REFRESH_GRACE = 30;
const PROVIDER_REFRESH_GRACE_RANGE = [0, 300] as const;
/** The resources every provider serves besides AUTH_PROVIDER_RESOURCES: paths under AUTH_URL. */
export const PROVIDER_OWN_RESOURCE_PATHS = ["/api", "/mcp"] as const;

/**
 * A resource indicator as compared (RFC 8707): an absolute http(s) URL without a fragment, scheme
 * and host in lower case (the URL parser does that), without a trailing slash. Null when it is no
 * such URL.
 */
export function normalizeResource(value: string): string | null {
  const url = URL.parse(value.trim());
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.hash || url.username || url.password) return null;
  if (value.includes("#")) return null;
  const text = url.href;
  return text.endsWith("/") ? text.slice(0, -1) : text;
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevelSetting = (typeof LOG_LEVELS)[number];
export type LogSettings = { level: LogLevelSetting; requests: boolean };
export const AUTH_EVENT_RETENTION_DAYS = 90;
export const DATABASE_POOL_MAX = 10;
export const DATABASE_TIMEOUT_MS = 5_000;
/** The recent sign-in window, seconds. */
export const AUTH_REAUTH_MAX_AGE = 600;
/** The admin console's recent sign-in window, seconds (ADR 110): its pages, not its actions (those take AUTH_REAUTH_MAX_AGE). */
export const AUTH_ADMIN_REAUTH_MAX_AGE = 3_600;
/** METRICS_TOKEN's shortest length: a scraper's secret, guessed by nobody (ADR 076). */
export const METRICS_TOKEN_MIN_LENGTH = 32;

const isLogLevel = (value: string): value is LogLevelSetting => (LOG_LEVELS as readonly string[]).includes(value);

/**
 * The log settings of an environment, for the logger, which must not throw while logging: an
 * unknown LOG_LEVEL falls back to info here, and loadConfig() refuses it at start. The tests'
 * VESTIBULE_LOG=silent silences every line.
 */
export function logSettings(env: Record<string, string | undefined> = process.env): LogSettings {
  const raw = env.LOG_LEVEL?.trim().toLowerCase() ?? "";
  const level = env.VESTIBULE_LOG === "silent" ? "silent" : isLogLevel(raw) ? raw : "info";
  const requests = env.LOG_REQUESTS === "true" || env.LOG_REQUESTS === "1";
  return { level, requests };
}

/** A whole number from `min` to `max` in a variable, or the default when it is unset or empty. */
function wholeNumber(
  env: Record<string, string | undefined>,
  name: string,
  { min, max, fallback, unit }: { min: number; max: number; fallback: number; unit: string },
  problems: string[],
): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (value >= min && value <= max) return value;
  problems.push(`${name} must be a whole number of ${unit} from ${min} to ${max} (default ${fallback})`);
  return fallback;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}


const bool = (name: string) =>
  z
    .enum(["true", "false", "1", "0", ""], { error: `${name} must be "true" or "false"` })
    .optional()
    .transform((v) => (v === undefined || v === "" ? undefined : v === "true" || v === "1"));

const EnvSchema = z.object({
  NODE_ENV: z.string().optional(),
  AUTH_SECRET: z.string().optional(),
  AUTH_URL: z.string().optional(),
  AUTH_TRUST_HOST: bool("AUTH_TRUST_HOST"),
  AUTH_ALLOWED_HOSTS: z.string().optional(),
  AUTH_TRUSTED_PROXIES: z.string().optional(),
  AUTH_HSTS_SUBDOMAINS: bool("AUTH_HSTS_SUBDOMAINS"),
  DATABASE_URL: z.string().optional(),
  VESTIBULE_DATA_DIR: z.string().optional(),
  AUTH_SESSION_STRATEGY: z
    .enum(["jwt", "database"], { error: 'AUTH_SESSION_STRATEGY must be "jwt" or "database"' })
    .optional(),
  AUTH_SESSION_ABSOLUTE_MAX_AGE: z.string().optional(),
  AUTH_OIDC_ISSUER: z.string().optional(),
  AUTH_OIDC_ID: z.string().optional(),
  AUTH_OIDC_SECRET: z.string().optional(),
  AUTH_OIDC_NAME: z.string().optional(),
  AUTH_OIDC_FEDERATED_SIGNOUT: bool("AUTH_OIDC_FEDERATED_SIGNOUT"),
  AUTH_EMAIL_SERVER: z.string().optional(),
  AUTH_EMAIL_FROM: z.string().optional(),
  AUTH_EMAIL_CONFIRM: bool("AUTH_EMAIL_CONFIRM"),
  AUTH_EMAIL_MAX_AGE: z.string().optional(),
  AUTH_CREDENTIALS: bool("AUTH_CREDENTIALS"),
  AUTH_PASSKEYS: bool("AUTH_PASSKEYS"),
  LOG_REQUESTS: bool("LOG_REQUESTS"),
  AUTH_SIGNUP: bool("AUTH_SIGNUP"),
  AUTH_PASSWORD_MIN_LENGTH: z.string().optional(),
  AUTH_PASSWORD_CONTEXT_WORDS: z.string().optional(),
  AUTH_PASSWORD_BREACH_CHECK: z
    .enum(["hibp", "off", ""], { error: 'AUTH_PASSWORD_BREACH_CHECK must be "hibp" (or unset for the bundled list only)' })
    .optional(),
  AUTH_PASSWORD_BREACH_URL: z.string().optional(),
  AUTH_EMAIL_CODE: bool("AUTH_EMAIL_CODE"),
  AUTH_SECURITY_EMAILS: bool("AUTH_SECURITY_EMAILS"),
  AUTH_EMAIL_CODE_MAX_AGE: z.string().optional(),
  AUTH_ASSURANCE: z
    .enum([...ASSURANCE_LEVELS, ""], { error: 'AUTH_ASSURANCE must be "aal1" or "aal2" (default aal1)' })
    .optional(),
  AUTH_REQUIRE_MFA: bool("AUTH_REQUIRE_MFA"),
  AUTH_ORGANIZATIONS: bool("AUTH_ORGANIZATIONS"),
  AUTH_ORGANIZATIONS_CREATE: z
    .enum(["all", "admins", ""], { error: 'AUTH_ORGANIZATIONS_CREATE must be "all" or "admins" (default all)' })
    .optional(),
  AUTH_DNS_SERVERS: z.string().optional(),
  AUTH_PROVIDER: bool("AUTH_PROVIDER"),
  AUTH_PROVIDER_REGISTRATION: z
    .enum(["open", "off", ""], { error: 'AUTH_PROVIDER_REGISTRATION must be "open" or "off" (default off)' })
    .optional(),
  AUTH_PROVIDER_CLIENT_METADATA_DOCUMENTS: bool("AUTH_PROVIDER_CLIENT_METADATA_DOCUMENTS"),
  AUTH_PROVIDER_RESOURCES: z.string().optional(),
  AUTH_PROVIDER_SUBJECT: z
    .enum(["public", "pairwise", ""], { error: 'AUTH_PROVIDER_SUBJECT must be "public" or "pairwise" (default public)' })
    .optional(),
});

/**
 * Where the environment puts the database, read without building the configuration (which, in
 * development, writes a secret into the data folder): the maintenance commands look for the
 * database before anything is created (ADR 107). loadConfig takes the data folder from here and
 * checks DATABASE_URL.
 */
export function databaseLocation(env: Record<string, string | undefined> = process.env): { databaseUrl: string | null; dataDir: string } {
  return { databaseUrl: env.DATABASE_URL || null, dataDir: path.resolve(env.VESTIBULE_DATA_DIR || ".data") };
}

/** Pure apart from the dev secret file: builds the configuration from an environment. */
export function loadConfig(env: Record<string, string | undefined> = process.env): AuthConfig {
  const problems: string[] = [];
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => i.message));
  }
  const e = parsed.data;
  const production = e.NODE_ENV === "production";
  const dataDir = databaseLocation(env).dataDir;

  // Secrets
  let secrets: string[] = (e.AUTH_SECRET ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (secrets.length === 0) {
    if (production) problems.push("AUTH_SECRET is required in production (at least 32 characters)");
    else secrets = [devSecret(dataDir)];
  }
  for (const [i, s] of secrets.entries()) {
    if (s.length < 32) problems.push(`AUTH_SECRET value ${i + 1} is ${s.length} characters; at least 32 are required`);
  }

  // Origin
  let origin: string | null = null;
  if (e.AUTH_URL) {
    const u = safeUrl(e.AUTH_URL);
    if (!u || (u.protocol !== "http:" && u.protocol !== "https:")) {
      problems.push(`AUTH_URL must be an http(s) URL such as https://app.example.com (got "${e.AUTH_URL}")`);
    } else {
      origin = u.origin;
    }
  }
  const trustHost = e.AUTH_TRUST_HOST ?? false;
  if (production && !origin && !trustHost) {
    problems.push("AUTH_URL is required in production (or AUTH_TRUST_HOST=true behind a proxy that sets X-Forwarded-Host)");
  }
  // Which hosts a request may name when the origin comes from it (docs/decisions/105).
  const allowedHosts = parseAllowedHosts(e.AUTH_ALLOWED_HOSTS, problems);
  if (trustHost && !origin && !allowedHosts) {
    problems.push(
      "AUTH_TRUST_HOST=true without AUTH_URL needs AUTH_ALLOWED_HOSTS: the comma-separated host names the proxy may forward (e.g. app.example.com), so that a forged X-Forwarded-Host never chooses the address in an e-mailed link",
    );
  }

  // Proxies whose X-Forwarded-For is believed (AUTH_TRUST_HOST never implies this)
  let trustedProxies: TrustedProxies | null = null;
  if (e.AUTH_TRUSTED_PROXIES?.trim()) {
    const parsedProxies = parseTrustedProxies(e.AUTH_TRUSTED_PROXIES);
    if ("problem" in parsedProxies) problems.push(`AUTH_TRUSTED_PROXIES ${parsedProxies.problem}`);
    else trustedProxies = parsedProxies.proxies;
  }

  // Database
  let databaseUrl: string | null = null;
  if (e.DATABASE_URL) {
    const u = safeUrl(e.DATABASE_URL);
    if (!u || (u.protocol !== "postgresql:" && u.protocol !== "postgres:")) {
      problems.push("DATABASE_URL must be a postgresql:// URL (leave it unset for the embedded SQLite database)");
    } else databaseUrl = e.DATABASE_URL;
  }

  // OAuth and OpenID Connect providers (provider-settings.server.ts)
  const { oidc, oidcProviders, presets } = providerSettings(env, problems);

  // E-mail
  let email: AuthConfig["email"] = null;
  if (e.AUTH_EMAIL_SERVER || e.AUTH_EMAIL_FROM) {
    const server = e.AUTH_EMAIL_SERVER ? safeUrl(e.AUTH_EMAIL_SERVER) : null;
    if (!e.AUTH_EMAIL_SERVER) problems.push("AUTH_EMAIL_SERVER is required when AUTH_EMAIL_FROM is set");
    else if (!server || (server.protocol !== "smtp:" && server.protocol !== "smtps:")) {
      problems.push("AUTH_EMAIL_SERVER must be an smtp:// or smtps:// URL, e.g. smtp://user:pass@host:587");
    }
    if (!e.AUTH_EMAIL_FROM) problems.push("AUTH_EMAIL_FROM is required when AUTH_EMAIL_SERVER is set");
    // "Name <a@b.c>" or "a@b.c": one address, so a bad sender fails here rather than at the first send.
    else if (!/^(?:[^<>@\r\n]*<)?[^\s<>@",;]+@[^\s<>@",;]+\.[^\s<>@",;]+>?$/.test(e.AUTH_EMAIL_FROM.trim())) {
      problems.push(`AUTH_EMAIL_FROM must be one sender address such as "Vestibule <no-reply@example.com>" (got "${e.AUTH_EMAIL_FROM}")`);
    }
    if (server && e.AUTH_EMAIL_FROM && e.AUTH_EMAIL_SERVER) email = { server: e.AUTH_EMAIL_SERVER, from: e.AUTH_EMAIL_FROM };
  }
  let emailTokenMaxAge = EMAIL_TOKEN_MAX_AGE;
  if (e.AUTH_EMAIL_MAX_AGE) {
    const n = Number(e.AUTH_EMAIL_MAX_AGE);
    if (!Number.isInteger(n) || n < 60 || n > 7 * 24 * 3600) {
      problems.push("AUTH_EMAIL_MAX_AGE must be a whole number of seconds between 60 and 604800");
    } else emailTokenMaxAge = n;
  }

  // The site's name: shown in titles, e-mails, authenticator apps.
  const siteName = env.AUTH_SITE_NAME === undefined || env.AUTH_SITE_NAME === "" ? DEFAULT_SITE_NAME : env.AUTH_SITE_NAME.trim();
  if (!siteName || siteName.length > SITE_NAME_MAX_LENGTH || /[\p{Cc}]/u.test(siteName)) {
    problems.push(`AUTH_SITE_NAME must be the site's name, 1 to ${SITE_NAME_MAX_LENGTH} characters on one line (default ${DEFAULT_SITE_NAME})`);
  }

  // Session lifetimes (ADR 113): the update age is at most the max age.
  const configuredMaxAge = wholeNumber(env, "AUTH_SESSION_MAX_AGE", { min: SESSION_MAX_AGE_RANGE[0], max: SESSION_MAX_AGE_RANGE[1], fallback: SESSION_MAX_AGE, unit: "seconds" }, problems);
  const configuredUpdateAge = wholeNumber(
    env,
    "AUTH_SESSION_UPDATE_AGE",
    { min: 0, max: configuredMaxAge, fallback: Math.min(SESSION_UPDATE_AGE, configuredMaxAge), unit: "seconds" },
    problems,
  );

  let sessionAbsoluteMaxAge: number | null = null;
  if (e.AUTH_SESSION_ABSOLUTE_MAX_AGE) {
    const n = Number(e.AUTH_SESSION_ABSOLUTE_MAX_AGE);
    if (!/^\d+$/.test(e.AUTH_SESSION_ABSOLUTE_MAX_AGE) || n < 60) {
      problems.push("AUTH_SESSION_ABSOLUTE_MAX_AGE must be a whole number of seconds, at least 60 (leave it unset for no limit)");
    } else sessionAbsoluteMaxAge = n;
  }

  // Passwords chosen by visitors, and e-mailed codes
  const passwordMinLength = wholeNumberIn(e.AUTH_PASSWORD_MIN_LENGTH, "AUTH_PASSWORD_MIN_LENGTH", PASSWORD_MIN_LENGTH, PASSWORD_MIN_LENGTH_RANGE, "characters", problems);
  let passwordBreachCheck: AuthConfig["passwordBreachCheck"] = null;
  const breachUrl = e.AUTH_PASSWORD_BREACH_URL?.trim() || DEFAULT_PASSWORD_BREACH_URL;
  const breachBase = safeUrl(breachUrl);
  if (!breachBase || (breachBase.protocol !== "https:" && breachBase.protocol !== "http:") || breachUrl.endsWith("/") || breachBase.search || breachBase.hash) {
    problems.push(`AUTH_PASSWORD_BREACH_URL must be an http(s) origin or URL without a trailing slash, e.g. ${DEFAULT_PASSWORD_BREACH_URL} (got "${breachUrl}")`);
  } else if (e.AUTH_PASSWORD_BREACH_CHECK === "hibp") {
    passwordBreachCheck = { url: breachUrl };
  }
  const emailCodeMaxAge = wholeNumberIn(e.AUTH_EMAIL_CODE_MAX_AGE, "AUTH_EMAIL_CODE_MAX_AGE", EMAIL_CODE_MAX_AGE, EMAIL_CODE_MAX_AGE_RANGE, "seconds", problems);

  const rateLimits = parseLimitOverrides(env);
  problems.push(...rateLimits.problems);

  // Operations
  const logLevel = env.LOG_LEVEL?.trim().toLowerCase();
  if (logLevel && !isLogLevel(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")} (default info; got "${env.LOG_LEVEL}")`);
  const authEventRetentionDays = wholeNumber(env, "AUTH_EVENT_RETENTION_DAYS", { min: 1, max: 36_500, fallback: AUTH_EVENT_RETENTION_DAYS, unit: "days" }, problems);
  const databasePoolMax = wholeNumber(env, "DATABASE_POOL_MAX", { min: 1, max: 1_000, fallback: DATABASE_POOL_MAX, unit: "connections" }, problems);
  const databaseTimeoutMs = wholeNumber(env, "DATABASE_TIMEOUT_MS", { min: 100, max: 600_000, fallback: DATABASE_TIMEOUT_MS, unit: "milliseconds" }, problems);
  // Assurance: from one minute to one day.
  const reauthMaxAge = wholeNumber(env, "AUTH_REAUTH_MAX_AGE", { min: 60, max: 86_400, fallback: AUTH_REAUTH_MAX_AGE, unit: "seconds" }, problems);
  const adminReauthMaxAge = wholeNumber(env, "AUTH_ADMIN_REAUTH_MAX_AGE", { min: 60, max: 86_400, fallback: AUTH_ADMIN_REAUTH_MAX_AGE, unit: "seconds" }, problems);

  // Metrics: a bearer token of RFC 6750's characters, long enough not to be guessed.
  const metricsToken = env.METRICS_TOKEN?.trim() || null;
  if (metricsToken && !(metricsToken.length >= METRICS_TOKEN_MIN_LENGTH && /^[A-Za-z0-9._~+/-]+=*$/.test(metricsToken))) {
    problems.push(`METRICS_TOKEN must be at least ${METRICS_TOKEN_MIN_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + / (a bearer token, e.g. openssl rand -hex 32); leave it unset to turn /metrics off`);
  }

  const dnsServers = parseDnsServers(e.AUTH_DNS_SERVERS, problems);
  // The OAuth provider (docs/features/provider.md): its issuer is AUTH_URL, never a request's host.
  let provider: ProviderConfig | null = null;
  const accessTokenTtl = wholeNumber(env, "AUTH_PROVIDER_ACCESS_TOKEN_TTL", { min: PROVIDER_ACCESS_TOKEN_TTL_RANGE[0], max: PROVIDER_ACCESS_TOKEN_TTL_RANGE[1], fallback: PROVIDER_ACCESS_TOKEN_TTL, unit: "seconds" }, problems);
  const refreshGrace = wholeNumber(env, "AUTH_PROVIDER_REFRESH_GRACE", { min: PROVIDER_REFRESH_GRACE_RANGE[0], max: PROVIDER_REFRESH_GRACE_RANGE[1], fallback: PROVIDER_REFRESH_GRACE, unit: "seconds" }, problems);
  if (e.AUTH_PROVIDER) {
    if (!origin) problems.push("AUTH_PROVIDER=true needs AUTH_URL: the provider's issuer is that origin, never a request's host");
    const resources: string[] = [];
    for (const raw of (e.AUTH_PROVIDER_RESOURCES ?? "").split(",").map((r) => r.trim()).filter(Boolean)) {
      const resource = normalizeResource(raw);
      if (resource) resources.push(resource);
      else problems.push(`AUTH_PROVIDER_RESOURCES must be a comma list of absolute http(s) URLs without a fragment (got "${raw}")`);
    }
    if (origin) {
      for (const own of PROVIDER_OWN_RESOURCE_PATHS) resources.push(normalizeResource(`${origin}${own}`)!);
      provider = {
        issuer: origin,
        registration: e.AUTH_PROVIDER_REGISTRATION === "open" ? "open" : "off",
        clientMetadataDocuments: e.AUTH_PROVIDER_CLIENT_METADATA_DOCUMENTS ?? true,
        resources: [...new Set(resources)],
        accessTokenTtl,
        refreshGrace,
        subject: e.AUTH_PROVIDER_SUBJECT === "pairwise" ? "pairwise" : "public",
      };
    }
  }

  if (problems.length) throw new ConfigError(problems);

  // Assurance level (ADR 082): aal2 caps each lifetime; a shorter one set explicitly still wins.
  const assurance: AssuranceLevel = e.AUTH_ASSURANCE || "aal1";
  const aal2 = assurance === "aal2";
  const capped = (value: number, cap: number) => (aal2 ? Math.min(value, cap) : value);
  const linkMaxAge = capped(emailTokenMaxAge, AAL2_EMAIL_MAX_AGE);

  return {
    production,
    secrets: secrets as [string, ...string[]],
    origin,
    trustHost,
    // With AUTH_URL no request names the origin: the list has nothing to decide.
    allowedHosts: origin ? null : allowedHosts,
    hstsSubdomains: e.AUTH_HSTS_SUBDOMAINS ?? true,
    trustedProxies,
    basePath: BASE_PATH,
    dataDir,
    databaseUrl,
    sessionStrategy: e.AUTH_SESSION_STRATEGY ?? "jwt",
    siteName,
    sessionMaxAge: capped(configuredMaxAge, AAL2_SESSION_IDLE_MAX_AGE),
    sessionUpdateAge: capped(configuredUpdateAge, AAL2_SESSION_UPDATE_AGE),
    sessionAbsoluteMaxAge: aal2 ? Math.min(sessionAbsoluteMaxAge ?? AAL2_SESSION_ABSOLUTE_MAX_AGE, AAL2_SESSION_ABSOLUTE_MAX_AGE) : sessionAbsoluteMaxAge,
    oidc,
    oidcProviders,
    presets,
    email,
    emailConfirm: e.AUTH_EMAIL_CONFIRM ?? false,
    emailTokenMaxAge: linkMaxAge,
    credentials: e.AUTH_CREDENTIALS ?? true,
    passkeys: e.AUTH_PASSKEYS ?? true,
    signup: e.AUTH_SIGNUP ?? !production,
    passwordMinLength,
    passwordContextWords: contextWords(e.AUTH_PASSWORD_CONTEXT_WORDS, siteName, origin),
    passwordBreachCheck,
    emailCode: e.AUTH_EMAIL_CODE ?? true,
    // A code never outlives its link (AUTH_EMAIL_MAX_AGE may be as short as 60 s).
    emailCodeMaxAge: Math.min(emailCodeMaxAge, linkMaxAge),
    oauthTimeoutMs: OAUTH_TIMEOUT_MS,
    rateLimits: rateLimits.limits,
    log: logSettings(env),
    authEventRetentionDays,
    databasePoolMax,
    databaseTimeoutMs,
    reauthMaxAge,
    adminReauthMaxAge,
    securityEmails: e.AUTH_SECURITY_EMAILS ?? true,
    metricsToken,
    assurance,
    // An explicit AUTH_REQUIRE_MFA, true or false, wins over the level's default.
    requireMfa: e.AUTH_REQUIRE_MFA ?? aal2,
    passwordResetLinkMaxAge: capped(PASSWORD_RESET_LINK_MAX_AGE, AAL2_EMAIL_MAX_AGE),
    organizations: e.AUTH_ORGANIZATIONS ?? false,
    organizationsCreate: e.AUTH_ORGANIZATIONS_CREATE === "admins" ? "admins" : "all",
    dnsServers,
    provider,
  };
}

/** An IPv4 address, or a bracketed IPv6 one, with an optional port: what node:dns's setServers takes. */
const DNS_SERVER = /^(?:\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?|\[[0-9a-fA-F:.]+\](?::\d{1,5})?|[0-9a-fA-F:]+:[0-9a-fA-F:.]*)$/;

/** AUTH_DNS_SERVERS: a comma list of resolver addresses; null when it names none (the system's resolvers). */
function parseDnsServers(raw: string | undefined, problems: string[]): string[] | null {
  const servers = (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const server of servers) {
    if (!DNS_SERVER.test(server)) problems.push(`AUTH_DNS_SERVERS must be a comma-separated list of resolver IP addresses, each optionally with a port, such as 1.1.1.1,[2606:4700:4700::1111]:53 (got "${server}")`);
  }
  return servers.length ? servers : null;
}

/**
 * AUTH_PASSWORD_CONTEXT_WORDS (a comma list), the site's name, AUTH_URL's host and each label of it
 * ("app.example.com": also "example"), lower case, without the words shorter than
 * CONTEXT_WORD_MIN_LENGTH and without repeats. Top-level domains such as "com" fall out by length.
 */
function contextWords(raw: string | undefined, siteName: string, origin: string | null): string[] {
  const words = (raw ?? "").split(",").map((w) => w.trim());
  words.push(siteName);
  if (origin) {
    const host = new URL(origin).hostname;
    words.push(host, ...host.split("."));
  }
  return [...new Set(words.map((w) => w.normalize("NFKC").toLowerCase()).filter((w) => [...w].length >= CONTEXT_WORD_MIN_LENGTH))];
}

/** A host name, IPv4 address or bracketed IPv6 address, optionally with a port: what Host may hold. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;

/** Whether `value` is a host (and optional port) as an allow-list entry or a request may name it, lower case. */
export function isHostValue(value: string): boolean {
  const m = HOST.exec(value);
  return m !== null && (m[1] === undefined || Number(m[1]) <= 65_535);
}

/** AUTH_ALLOWED_HOSTS: a comma list of hosts, lower case; null when it names none. */
function parseAllowedHosts(raw: string | undefined, problems: string[]): string[] | null {
  const hosts = (raw ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  for (const host of hosts) {
    if (!isHostValue(host)) {
      problems.push(`AUTH_ALLOWED_HOSTS must be a comma-separated list of host names, each optionally with a port, such as app.example.com,www.example.com (got "${host}")`);
    }
  }
  return hosts.length ? [...new Set(hosts)] : null;
}

/** An optional whole number within `range`, else `fallback`; a bad value is a problem naming `name`. */
function wholeNumberIn(
  raw: string | undefined,
  name: string,
  fallback: number,
  [min, max]: readonly [number, number],
  unit: string,
  problems: string[],
): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || n < min || n > max) {
    problems.push(`${name} must be a whole number of ${unit} between ${min} and ${max} (got "${raw}")`);
    return fallback;
  }
  return n;
}

function safeUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/** Development only: a random secret generated once and kept in the data folder. */
function devSecret(dataDir: string): string {
  const file = path.join(dataDir, "auth-secret");
  if (existsSync(file)) {
    const kept = readFileSync(file, "utf8").trim();
    if (kept.length >= 32) return kept;
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString("hex");
  writeFileSync(file, secret + "\n", { mode: 0o600 });
  return secret;
}

let cached: AuthConfig | null = null;

/** The process-wide configuration, loaded on first use. */
export function getConfig(): AuthConfig {
  cached ??= loadConfig();
  return cached;
}

/** Tests and the dev bootstrap change the environment and then reload. */
export function resetConfig(next: AuthConfig | null = null) {
  cached = next;
}
