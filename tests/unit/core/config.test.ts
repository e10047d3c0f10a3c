import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../app/auth/core/config.server";
import { DEFAULT_LIMITS } from "../../../app/auth/core/limits.server";

const secret = "config-test-secret-0123456789abcdef0123456789";

function problems(env: Record<string, string>) {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("configuration", () => {
  it("refuses to start in production without AUTH_SECRET, naming the variable", () => {
    expect(problems({ NODE_ENV: "production", AUTH_URL: "https://app.example.com" })).toEqual([
      "AUTH_SECRET is required in production (at least 32 characters)",
    ]);
  });

  it("generates a development secret once and keeps it in the data folder", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "vestibule-config-"));
    const first = loadConfig({ VESTIBULE_DATA_DIR: dir });
    const second = loadConfig({ VESTIBULE_DATA_DIR: dir });
    expect(first.secrets[0]).toHaveLength(64);
    expect(second.secrets).toEqual(first.secrets);
    expect(readFileSync(path.join(dir, "auth-secret"), "utf8").trim()).toBe(first.secrets[0]);
  });

  it("splits rotated secrets and checks each one's length", () => {
    expect(loadConfig({ AUTH_SECRET: `${secret}, ${secret}-old` }).secrets).toEqual([secret, `${secret}-old`]);
    expect(problems({ AUTH_SECRET: `${secret},short` })).toEqual(["AUTH_SECRET value 2 is 5 characters; at least 32 are required"]);
  });

  it("reports every bad variable at once with its name", () => {
    const found = problems({
      AUTH_SECRET: secret,
      AUTH_URL: "ftp://x",
      AUTH_SESSION_STRATEGY: "cookie",
    });
    expect(found).toEqual(['AUTH_SESSION_STRATEGY must be "jwt" or "database"']);
    expect(
      problems({
        AUTH_SECRET: secret,
        AUTH_URL: "ftp://x",
        DATABASE_URL: "mysql://x",
        AUTH_OIDC_ISSUER: "http://idp.example.com",
        AUTH_OIDC_ID: "id",
        AUTH_GITHUB_ID: "gh",
        AUTH_EMAIL_SERVER: "http://mail",
      }),
    ).toEqual([
      'AUTH_URL must be an http(s) URL such as https://app.example.com (got "ftp://x")',
      "DATABASE_URL must be a postgresql:// URL (leave it unset for the embedded SQLite database)",
      "AUTH_OIDC_SECRET is required when AUTH_OIDC_ISSUER is set",
      "AUTH_OIDC_ISSUER must use https: (http: is allowed only on localhost, 127.0.0.1 and [::1])",
      "AUTH_GITHUB_SECRET is required when AUTH_GITHUB_ID is set",
      "AUTH_EMAIL_SERVER must be an smtp:// or smtps:// URL, e.g. smtp://user:pass@host:587",
      "AUTH_EMAIL_FROM is required when AUTH_EMAIL_SERVER is set",
    ]);
  });

  it("checks that AUTH_EMAIL_FROM names one sender address", () => {
    const smtp = { AUTH_SECRET: secret, AUTH_EMAIL_SERVER: "smtp://mail.example.com:587" };
    expect(loadConfig({ ...smtp, AUTH_EMAIL_FROM: "Vestibule <no-reply@example.com>" }).email?.from).toBe("Vestibule <no-reply@example.com>");
    expect(loadConfig({ ...smtp, AUTH_EMAIL_FROM: "no-reply@example.com" }).email).not.toBeNull();
    for (const from of ["Vestibule", "a@b", "a@b.c, c@d.e", "<>"]) {
      expect(problems({ ...smtp, AUTH_EMAIL_FROM: from })[0]).toMatch(/^AUTH_EMAIL_FROM must be one sender address/);
    }
  });

  it("requires AUTH_URL in production unless the host is trusted", () => {
    expect(problems({ NODE_ENV: "production", AUTH_SECRET: secret })[0]).toMatch(/^AUTH_URL is required in production/);
    expect(loadConfig({ NODE_ENV: "production", AUTH_SECRET: secret, AUTH_TRUST_HOST: "true", AUTH_ALLOWED_HOSTS: "app.example.com" }).trustHost).toBe(true);
  });

  it("an operator who trusts forwarded hosts without AUTH_URL or AUTH_ALLOWED_HOSTS is refused at start, naming the variables", () => {
    for (const env of [{ NODE_ENV: "production" }, {}, { AUTH_ALLOWED_HOSTS: " , " }] as Record<string, string>[]) {
      expect(problems({ ...env, AUTH_SECRET: secret, AUTH_TRUST_HOST: "true" })).toEqual([
        "AUTH_TRUST_HOST=true without AUTH_URL needs AUTH_ALLOWED_HOSTS: the comma-separated host names the proxy may forward (e.g. app.example.com), so that a forged X-Forwarded-Host never chooses the address in an e-mailed link",
      ]);
    }
    // With AUTH_URL, forwarded headers never make a link: no list is needed.
    expect(loadConfig({ NODE_ENV: "production", AUTH_SECRET: secret, AUTH_TRUST_HOST: "true", AUTH_URL: "https://app.example.com" }).allowedHosts).toBeNull();
  });

  it("AUTH_ALLOWED_HOSTS: host names (a port optional), lower-cased; anything else is refused by name", () => {
    const c = loadConfig({ AUTH_SECRET: secret, AUTH_TRUST_HOST: "true", AUTH_ALLOWED_HOSTS: " App.Example.com, www.example.com:8443 ,[::1]" });
    expect(c.allowedHosts).toEqual(["app.example.com", "www.example.com:8443", "[::1]"]);
    for (const bad of ["https://app.example.com", "app.example.com/path", "*.example.com", "app example.com", "app.example.com:99999", "user@app.example.com"]) {
      expect(problems({ AUTH_SECRET: secret, AUTH_TRUST_HOST: "true", AUTH_ALLOWED_HOSTS: `ok.example.com,${bad}` }), bad).toEqual([
        `AUTH_ALLOWED_HOSTS must be a comma-separated list of host names, each optionally with a port, such as app.example.com,www.example.com (got "${bad}")`,
      ]);
    }
  });

  it("has the defaults", () => {
    const c = loadConfig({ AUTH_SECRET: secret });
    expect(c).toMatchObject({
      sessionStrategy: "jwt",
      sessionMaxAge: 2592000,
      sessionUpdateAge: 86400,
      emailTokenMaxAge: 86400,
      credentials: true,
      emailConfirm: false,
      databaseUrl: null,
      origin: null,
      basePath: "/auth",
    });
    expect(loadConfig({ AUTH_SECRET: secret, AUTH_CREDENTIALS: "false" }).credentials).toBe(false);
    expect(loadConfig({ AUTH_SECRET: secret }).passkeys).toBe(true);
    expect(loadConfig({ AUTH_SECRET: secret, AUTH_PASSKEYS: "false" }).passkeys).toBe(false);
    expect(() => loadConfig({ AUTH_SECRET: secret, AUTH_PASSKEYS: "off" })).toThrow(/AUTH_PASSKEYS/);
    expect(loadConfig({ AUTH_SECRET: secret, AUTH_OIDC_ISSUER: "http://127.0.0.1:9000", AUTH_OIDC_ID: "a", AUTH_OIDC_SECRET: "b" }).oidc).toMatchObject({ name: "OpenID Connect" });
  });

  it("AUTH_REAUTH_MAX_AGE: 600 s by default, 60 to 86 400 accepted, anything else refused by name; AUTH_SECURITY_EMAILS on unless false", () => {
    expect(loadConfig({ AUTH_SECRET: secret })).toMatchObject({ reauthMaxAge: 600, securityEmails: true });
    expect(loadConfig({ AUTH_SECRET: secret, AUTH_REAUTH_MAX_AGE: "60" }).reauthMaxAge).toBe(60);
    expect(loadConfig({ AUTH_SECRET: secret, AUTH_REAUTH_MAX_AGE: "86400" }).reauthMaxAge).toBe(86400);
    for (const bad of ["59", "86401", "ten", "-5", "1.5"]) {
      expect(problems({ AUTH_SECRET: secret, AUTH_REAUTH_MAX_AGE: bad })).toEqual([expect.stringMatching(/^AUTH_REAUTH_MAX_AGE must be a whole number of seconds from 60 to 86400/)]);
    }
    expect(loadConfig({ AUTH_SECRET: secret, AUTH_SECURITY_EMAILS: "false" }).securityEmails).toBe(false);
    expect(problems({ AUTH_SECRET: secret, AUTH_SECURITY_EMAILS: "no" })).toEqual([expect.stringMatching(/AUTH_SECURITY_EMAILS/)]);
  });

  it("AUTH_ADMIN_REAUTH_MAX_AGE: 3600 s by default, 60 to 86 400 accepted, anything else refused by name", () => {
    expect(loadConfig({ AUTH_SECRET: secret }).adminReauthMaxAge).toBe(3600);
    expect(loadConfig({ AUTH_SECRET: secret, AUTH_ADMIN_REAUTH_MAX_AGE: "60" }).adminReauthMaxAge).toBe(60);
    expect(loadConfig({ AUTH_SECRET: secret, AUTH_ADMIN_REAUTH_MAX_AGE: "86400" }).adminReauthMaxAge).toBe(86400);
    for (const bad of ["59", "86401", "an hour", "-5", "1.5"]) {
      expect(problems({ AUTH_SECRET: secret, AUTH_ADMIN_REAUTH_MAX_AGE: bad })).toEqual([expect.stringMatching(/^AUTH_ADMIN_REAUTH_MAX_AGE must be a whole number of seconds from 60 to 86400/)]);
    }
  });

  describe("AUTH_RATE_LIMIT_<NAME>", () => {
    it("takes <count>/<seconds> over the default and keeps the other limits", () => {
      const c = loadConfig({ AUTH_SECRET: secret, AUTH_RATE_LIMIT_CREDENTIALS_DEVICE: " 3 / 120 " });
      expect(c.rateLimits.CREDENTIALS_DEVICE).toEqual({ count: 3, seconds: 120 });
      expect(c.rateLimits.CREDENTIALS_CLIENT).toEqual(DEFAULT_LIMITS.CREDENTIALS_CLIENT);
    });

    it.each(["", "5", "5/", "/900", "0/900", "5/0", "-5/900", "5/-900", "1.5/900", "5/900/1", "0x5/900", "five/900", "1000001/900", "5/2592001", "5 900"])(
      "refuses to start with %j, naming the variable",
      (value) => {
        expect(() => loadConfig({ AUTH_SECRET: secret, AUTH_RATE_LIMIT_CREDENTIALS_ACCOUNT: value })).toThrow(ConfigError);
        expect(problems({ AUTH_SECRET: secret, AUTH_RATE_LIMIT_CREDENTIALS_ACCOUNT: value })).toEqual([
          "AUTH_RATE_LIMIT_CREDENTIALS_ACCOUNT must be <count>/<seconds>, e.g. 5/900 (count 1 to 1000000, seconds 1 to 2592000)",
        ]);
      },
    );

    it("accepts the bounds themselves", () => {
      const c = loadConfig({ AUTH_SECRET: secret, AUTH_RATE_LIMIT_EMAIL_CLIENT: "1000000/2592000", AUTH_RATE_LIMIT_EMAIL_ADDRESS: "1/1" });
      expect(c.rateLimits.EMAIL_CLIENT).toEqual({ count: 1_000_000, seconds: 2_592_000 });
      expect(c.rateLimits.EMAIL_ADDRESS).toEqual({ count: 1, seconds: 1 });
    });

    it("refuses an unknown name (a typo would silently keep the default) and reports every bad variable", () => {
      const found = problems({ AUTH_SECRET: secret, AUTH_RATE_LIMIT_CREDENTIAL_CLIENT: "5/60", AUTH_RATE_LIMIT_CLIENT_LOG: "many" });
      expect(found).toHaveLength(2);
      expect(found).toContainEqual(expect.stringMatching(/^AUTH_RATE_LIMIT_CREDENTIAL_CLIENT: unknown limit; the names are CREDENTIALS_ACCOUNT_CLIENT, /));
      expect(found).toContainEqual(expect.stringMatching(/^AUTH_RATE_LIMIT_CLIENT_LOG must be <count>\/<seconds>/));
    });
  });
});
