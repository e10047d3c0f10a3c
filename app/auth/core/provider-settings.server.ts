// The OAuth and OpenID Connect providers the environment turns on (docs/providers.md): the generic
// provider (AUTH_OIDC_ISSUER → id `oidc`), any number of named ones (AUTH_OIDC_<NAME>_ISSUER →
// id `<name>`), and the presets with Auth.js's variable names (AUTH_<PRESET>_ID/_SECRET, plus
// _ISSUER for the providers that have tenants). Read by loadConfig (config.server.ts); what each
// preset is lives in app/auth/oauth/presets/.
import { createPrivateKey } from "node:crypto";

export type OAuthClientConfig = { clientId: string; clientSecret: string };

/** Where a preset's issuer comes from: fixed in the preset, or the operator's tenant. */
type IssuerRule = "none" | "optional" | "required";

/** The presets, in display order, each with its AUTH_<PRESET>_ISSUER rule. */
export const PRESET_ISSUERS = {
  apple: "none",
  auth0: "required",
  cognito: "required",
  discord: "none",
  facebook: "none",
  github: "none",
  gitlab: "optional",
  google: "none",
  keycloak: "required",
  linkedin: "none",
  "microsoft-entra-id": "optional",
  okta: "required",
  slack: "none",
  spotify: "none",
  twitch: "none",
  twitter: "none",
} as const satisfies Record<string, IssuerRule>;

export type PresetId = keyof typeof PRESET_ISSUERS;
export const PRESET_IDS = Object.keys(PRESET_ISSUERS) as PresetId[];

/** Apple's client secret made here from the team's private key (AUTH_APPLE_SECRET in PEM form). */
export type AppleSigningKey = { teamId: string; keyId: string; privateKeyPem: string };

export type PresetClientConfig = OAuthClientConfig & {
  /** AUTH_<PRESET>_ISSUER, for the presets with tenants. */
  issuer?: string;
  /** Apple only, when AUTH_APPLE_SECRET is the .p8 key rather than a ready client-secret JWT. */
  appleKey?: AppleSigningKey;
};

export type OidcProviderConfig = OAuthClientConfig & {
  id: string;
  issuer: string;
  /** What the sign-in button says. */
  label: string;
  federatedSignOut?: boolean;
};

export type ProviderSettings = {
  oidc: (OAuthClientConfig & { issuer: string; name: string; federatedSignOut?: boolean }) | null;
  /** AUTH_OIDC_<NAME>_*, sorted by id. */
  oidcProviders: OidcProviderConfig[];
  presets: Partial<Record<PresetId, PresetClientConfig>>;
};

type Env = Record<string, string | undefined>;

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function isLoopbackHost(hostname: string) {
  return LOOPBACK_HOSTS.has(hostname);
}

/** The environment name of a preset: `microsoft-entra-id` → MICROSOFT_ENTRA_ID. */
export function presetEnvName(id: PresetId) {
  return id.toUpperCase().replace(/-/g, "_");
}

/** A named provider's NAME: a letter, then letters, digits and single underscores; 32 at most. */
const OIDC_NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;
const OIDC_NAME_MAX = 32;
const OIDC_LABEL_MAX = 64;
/** Any variable shaped like AUTH_OIDC_<something>_<part>, whatever the case of <something>. */
const OIDC_NAMED_VARIABLE = /^AUTH_OIDC_(.+)_(ISSUER|ID|SECRET|LABEL)$/;
/** Ids a named provider may not take: the other sign-in methods', the generic provider's and the presets'. */
const RESERVED_IDS = new Set<string>(["oidc", "credentials", "email", "passkey", "webauthn", ...PRESET_IDS, ...PRESET_IDS.map((p) => presetEnvName(p).toLowerCase())]);

/** An issuer URL: https:, or http: on a loopback host (the dev IdP, tests). Null and a problem otherwise. */
function issuerUrl(variable: string, value: string, problems: string[]): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(`${variable} must be a URL (got "${value}")`);
    return null;
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    problems.push(`${variable} must use https: (http: is allowed only on localhost, 127.0.0.1 and [::1])`);
    return null;
  }
  return value;
}

function genericProvider(env: Env, problems: string[]): ProviderSettings["oidc"] {
  const issuer = env.AUTH_OIDC_ISSUER;
  const clientId = env.AUTH_OIDC_ID;
  const clientSecret = env.AUTH_OIDC_SECRET;
  if (!issuer && !clientId && !clientSecret) return null;
  if (!issuer) problems.push("AUTH_OIDC_ISSUER is required when AUTH_OIDC_ID or AUTH_OIDC_SECRET is set");
  if (!clientId) problems.push("AUTH_OIDC_ID is required when AUTH_OIDC_ISSUER is set");
  if (!clientSecret) problems.push("AUTH_OIDC_SECRET is required when AUTH_OIDC_ISSUER is set");
  const checked = issuer ? issuerUrl("AUTH_OIDC_ISSUER", issuer, problems) : null;
  if (!checked || !clientId || !clientSecret) return null;
  const federated = env.AUTH_OIDC_FEDERATED_SIGNOUT;
  return {
    issuer: checked,
    clientId,
    clientSecret,
    name: env.AUTH_OIDC_NAME || "OpenID Connect",
    federatedSignOut: federated === "true" || federated === "1",
  };
}

/** AUTH_OIDC_<NAME>_ISSUER/_ID/_SECRET/_LABEL, one provider per NAME. */
function namedProviders(env: Env, problems: string[]): OidcProviderConfig[] {
  const names = new Set<string>();
  const refused = new Set<string>();
  for (const variable of Object.keys(env)) {
    const m = OIDC_NAMED_VARIABLE.exec(variable);
    if (!m || !env[variable]) continue;
    const name = m[1]!;
    if (names.has(name) || refused.has(name)) continue;
    // One problem per NAME, named after the first of its variables.
    refused.add(name);
    if (!OIDC_NAME.test(name) || name.length > OIDC_NAME_MAX) {
      problems.push(
        `${variable}: the provider name "${name}" must start with a letter and hold only capital letters, digits and single underscores (at most ${OIDC_NAME_MAX} characters), e.g. AUTH_OIDC_ACME_ISSUER`,
      );
      continue;
    }
    if (RESERVED_IDS.has(name.toLowerCase())) {
      problems.push(`${variable}: the provider name "${name}" is taken (by a preset or another sign-in method); choose another NAME`);
      continue;
    }
    refused.delete(name);
    names.add(name);
  }
  const providers: OidcProviderConfig[] = [];
  for (const name of [...names].sort()) {
    const issuerVar = `AUTH_OIDC_${name}_ISSUER`;
    const labelVar = `AUTH_OIDC_${name}_LABEL`;
    const issuer = env[issuerVar];
    const clientId = env[`AUTH_OIDC_${name}_ID`];
    const clientSecret = env[`AUTH_OIDC_${name}_SECRET`];
    const label = env[labelVar]?.trim();
    const required = [
      [issuerVar, issuer],
      [`AUTH_OIDC_${name}_ID`, clientId],
      [`AUTH_OIDC_${name}_SECRET`, clientSecret],
    ] as const;
    for (const [variable, value] of required) {
      if (!value) problems.push(`${variable} is required: the provider "${name.toLowerCase()}" needs its issuer, client id and client secret`);
    }
    if (label !== undefined && label.length > OIDC_LABEL_MAX) problems.push(`${labelVar} must be at most ${OIDC_LABEL_MAX} characters`);
    const checked = issuer ? issuerUrl(issuerVar, issuer, problems) : null;
    if (!checked || !clientId || !clientSecret) continue;
    const id = name.toLowerCase();
    providers.push({ id, issuer: checked, clientId, clientSecret, label: label || defaultLabel(id) });
  }
  return providers;
}

/** Without _LABEL the button names the provider: `globex_eu` → "Globex Eu". */
function defaultLabel(id: string): string {
  return id
    .split("_")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(" ");
}

/** The `\n` of a key pasted on one line become real line breaks. */
function pem(value: string): string {
  return value.includes("\\n") ? value.replace(/\\n/g, "\n") : value;
}

/** AUTH_APPLE_SECRET as a .p8 key: it needs AUTH_APPLE_TEAM_ID and AUTH_APPLE_KEY_ID, and must be an EC P-256 key. */
function appleKey(env: Env, secret: string, problems: string[]): AppleSigningKey | undefined {
  if (!secret.includes("-----BEGIN")) return undefined;
  const teamId = env.AUTH_APPLE_TEAM_ID?.trim();
  const keyId = env.AUTH_APPLE_KEY_ID?.trim();
  if (!teamId) problems.push("AUTH_APPLE_TEAM_ID is required when AUTH_APPLE_SECRET is a private key (the 10-character Team ID)");
  if (!keyId) problems.push("AUTH_APPLE_KEY_ID is required when AUTH_APPLE_SECRET is a private key (the key's 10-character Key ID)");
  const privateKeyPem = pem(secret);
  try {
    const key = createPrivateKey(privateKeyPem);
    if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") throw new Error("not P-256");
  } catch {
    problems.push("AUTH_APPLE_SECRET must be the EC P-256 private key Apple gave (the .p8 file's PEM text) or a client-secret JWT");
    return undefined;
  }
  return teamId && keyId ? { teamId, keyId, privateKeyPem } : undefined;
}

function presetClients(env: Env, problems: string[]): ProviderSettings["presets"] {
  const presets: ProviderSettings["presets"] = {};
  for (const id of PRESET_IDS) {
    const idVar = `AUTH_${presetEnvName(id)}_ID`;
    const secretVar = `AUTH_${presetEnvName(id)}_SECRET`;
    const issuerVar = `AUTH_${presetEnvName(id)}_ISSUER`;
    const clientId = env[idVar];
    const clientSecret = env[secretVar];
    if (!clientId && !clientSecret) continue;
    if (!clientId || !clientSecret) {
      problems.push(`${clientId ? secretVar : idVar} is required when ${clientId ? idVar : secretVar} is set`);
      continue;
    }
    const client: PresetClientConfig = { clientId, clientSecret };
    const rule: IssuerRule = PRESET_ISSUERS[id];
    if (rule !== "none") {
      const raw = env[issuerVar];
      if (raw) {
        const issuer = issuerUrl(issuerVar, raw, problems);
        if (!issuer) continue;
        client.issuer = issuer;
      } else if (rule === "required") {
        problems.push(`${issuerVar} is required with ${idVar}: the issuer URL of your ${id} tenant (docs/providers.md)`);
        continue;
      }
    }
    if (id === "apple") {
      const key = appleKey(env, clientSecret, problems);
      if (key) client.appleKey = key;
      else if (clientSecret.includes("-----BEGIN")) continue;
    }
    presets[id] = client;
  }
  return presets;
}

/** Every provider the environment turns on; each mistake is pushed onto `problems` with the variable's name. */
export function providerSettings(env: Env, problems: string[]): ProviderSettings {
  return { oidc: genericProvider(env, problems), oidcProviders: namedProviders(env, problems), presets: presetClients(env, problems) };
}
