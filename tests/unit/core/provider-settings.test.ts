// The providers the environment turns on (app/auth/core/provider-settings.server.ts): named
// OpenID providers and their name rule, the presets' issuer rule, Apple's key, and that every
// mistake stops the start with the variable's name.
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../app/auth/core/config.server";
import { oauthDefinitions } from "../../../app/auth/oauth/presets/index.server";
import { testConfig } from "../support";

const named = (name: string, issuer = "https://id.example.com") => ({
  [`AUTH_OIDC_${name}_ISSUER`]: issuer,
  [`AUTH_OIDC_${name}_ID`]: "client",
  [`AUTH_OIDC_${name}_SECRET`]: "secret",
});

function problems(env: Record<string, string>): string[] {
  try {
    testConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("named OpenID providers (AUTH_OIDC_<NAME>_*)", () => {
  it("each NAME is a provider with id <name> in lower case, after the generic one, sorted by name", () => {
    const config = testConfig({
      AUTH_OIDC_ISSUER: "https://generic.example.com",
      AUTH_OIDC_ID: "g",
      AUTH_OIDC_SECRET: "gs",
      ...named("ZETA"),
      ...named("ACME_EU"),
      AUTH_OIDC_ACME_EU_LABEL: "Acme (Europe)",
    });
    expect(config.oidcProviders.map((p) => [p.id, p.label])).toEqual([
      ["acme_eu", "Acme (Europe)"],
      ["zeta", "Zeta"],
    ]);
    expect(oauthDefinitions(config).map((d) => [d.id, d.name, d.type, d.issuer])).toEqual([
      ["oidc", "OpenID Connect", "oidc", "https://generic.example.com"],
      ["acme_eu", "Acme (Europe)", "oidc", "https://id.example.com"],
      ["zeta", "Zeta", "oidc", "https://id.example.com"],
    ]);
  });

  it("a bad NAME stops the start naming the variable and the rule", () => {
    for (const bad of ["acme", "1ACME", "AC-ME", "ACME__EU", "A".repeat(33)]) {
      const found = problems({ [`AUTH_OIDC_${bad}_ISSUER`]: "https://id.example.com" });
      expect(found, bad).toEqual([expect.stringContaining(`AUTH_OIDC_${bad}_ISSUER: the provider name "${bad}" must start with a letter`)]);
    }
  });

  it("a NAME taken by a preset or another sign-in method is refused", () => {
    for (const taken of ["GITHUB", "MICROSOFT_ENTRA_ID", "OIDC", "EMAIL", "CREDENTIALS", "PASSKEY"]) {
      expect(problems(named(taken)), taken).toEqual([expect.stringMatching(new RegExp(`^AUTH_OIDC_${taken}_ISSUER: .*is taken`))]);
    }
  });

  it("a half-configured provider names each missing variable; the issuer must be https: (http: only on loopback)", () => {
    expect(problems({ AUTH_OIDC_ACME_ISSUER: "https://id.example.com" }).sort()).toEqual([
      expect.stringMatching(/^AUTH_OIDC_ACME_ID is required/),
      expect.stringMatching(/^AUTH_OIDC_ACME_SECRET is required/),
    ]);
    expect(problems({ AUTH_OIDC_ACME_LABEL: "Acme" })).toHaveLength(3);
    expect(problems(named("ACME", "http://id.example.com"))).toEqual([expect.stringMatching(/^AUTH_OIDC_ACME_ISSUER must use https:/)]);
    expect(problems(named("ACME", "not a url"))).toEqual([expect.stringMatching(/^AUTH_OIDC_ACME_ISSUER must be a URL/)]);
    expect(problems(named("ACME", "http://127.0.0.1:9000"))).toEqual([]);
    expect(problems({ ...named("ACME"), AUTH_OIDC_ACME_LABEL: "x".repeat(65) })).toEqual([expect.stringMatching(/AUTH_OIDC_ACME_LABEL must be at most 64/)]);
  });

  it("the generic provider's own variables are not mistaken for a NAME", () => {
    expect(problems({ AUTH_OIDC_ISSUER: "https://id.example.com", AUTH_OIDC_ID: "c", AUTH_OIDC_SECRET: "s", AUTH_OIDC_NAME: "Corp", AUTH_OIDC_FEDERATED_SIGNOUT: "true" })).toEqual([]);
  });
});

describe("presets with tenants and Apple's key", () => {
  it("Auth0, Cognito, Keycloak and Okta need AUTH_<PRESET>_ISSUER; Entra ID and GitLab take one optionally", () => {
    for (const p of ["AUTH0", "COGNITO", "KEYCLOAK", "OKTA"]) {
      expect(problems({ [`AUTH_${p}_ID`]: "c", [`AUTH_${p}_SECRET`]: "s" }), p).toEqual([expect.stringMatching(new RegExp(`^AUTH_${p}_ISSUER is required`))]);
    }
    const config = testConfig({
      AUTH_KEYCLOAK_ID: "c",
      AUTH_KEYCLOAK_SECRET: "s",
      AUTH_KEYCLOAK_ISSUER: "https://sso.example.com/realms/acme",
      AUTH_AUTH0_ID: "c",
      AUTH_AUTH0_SECRET: "s",
      AUTH_AUTH0_ISSUER: "https://acme.eu.auth0.com/",
      AUTH_MICROSOFT_ENTRA_ID_ID: "c",
      AUTH_MICROSOFT_ENTRA_ID_SECRET: "s",
      AUTH_MICROSOFT_ENTRA_ID_ISSUER: "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0",
    });
    const defs = Object.fromEntries(oauthDefinitions(config).map((d) => [d.id, d]));
    expect(defs.keycloak!.issuer).toBe("https://sso.example.com/realms/acme");
    // Auth0's issuer ends with "/" whichever way it was written.
    expect([defs.auth0!.issuer, defs.auth0!.discoveryIssuer]).toEqual(["https://acme.eu.auth0.com", "https://acme.eu.auth0.com/"]);
    expect(defs["microsoft-entra-id"]!.issuer).toBe("https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0");
    expect(defs["microsoft-entra-id"]!.idTokenIssuer).toBeUndefined();
    expect(problems({ AUTH_OKTA_ID: "c", AUTH_OKTA_SECRET: "s", AUTH_OKTA_ISSUER: "http://okta.example.com" })).toEqual([expect.stringMatching(/^AUTH_OKTA_ISSUER must use https:/)]);
  });

  it("every preset is turned on by AUTH_<PRESET>_ID and _SECRET with Auth.js's names", () => {
    const env: Record<string, string> = {};
    for (const p of ["APPLE", "AUTH0", "COGNITO", "DISCORD", "FACEBOOK", "GITHUB", "GITLAB", "GOOGLE", "KEYCLOAK", "LINKEDIN", "MICROSOFT_ENTRA_ID", "OKTA", "SLACK", "SPOTIFY", "TWITCH", "TWITTER"]) {
      env[`AUTH_${p}_ID`] = `${p}-id`;
      env[`AUTH_${p}_SECRET`] = `${p}-secret`;
    }
    for (const p of ["AUTH0", "COGNITO", "KEYCLOAK", "OKTA"]) env[`AUTH_${p}_ISSUER`] = `https://${p.toLowerCase()}.example.com`;
    const defs = oauthDefinitions(testConfig(env));
    expect(defs.map((d) => [d.id, d.name])).toEqual([
      ["apple", "Apple"],
      ["auth0", "Auth0"],
      ["cognito", "Cognito"],
      ["discord", "Discord"],
      ["facebook", "Facebook"],
      ["github", "GitHub"],
      ["gitlab", "GitLab"],
      ["google", "Google"],
      ["keycloak", "Keycloak"],
      ["linkedin", "LinkedIn"],
      ["microsoft-entra-id", "Microsoft Entra ID"],
      ["okta", "Okta"],
      ["slack", "Slack"],
      ["spotify", "Spotify"],
      ["twitch", "Twitch"],
      ["twitter", "X"],
    ]);
    for (const d of defs) expect(d.clientId, d.id).toMatch(/-id$/);
  });

  it("AUTH_APPLE_SECRET as a .p8 key needs AUTH_APPLE_TEAM_ID and AUTH_APPLE_KEY_ID and must be a P-256 key; a ready JWT is taken as it is", () => {
    const p256 = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    expect(problems({ AUTH_APPLE_ID: "com.example.web", AUTH_APPLE_SECRET: p256 }).sort()).toEqual([
      expect.stringMatching(/^AUTH_APPLE_KEY_ID is required/),
      expect.stringMatching(/^AUTH_APPLE_TEAM_ID is required/),
    ]);
    expect(problems({ AUTH_APPLE_ID: "com.example.web", AUTH_APPLE_SECRET: rsa, AUTH_APPLE_TEAM_ID: "T", AUTH_APPLE_KEY_ID: "K" })).toEqual([
      expect.stringMatching(/^AUTH_APPLE_SECRET must be the EC P-256 private key/),
    ]);
    // Pasted on one line with \n, as a .env value often is.
    const oneLine = testConfig({ AUTH_APPLE_ID: "com.example.web", AUTH_APPLE_SECRET: p256.trim().replace(/\n/g, "\\n"), AUTH_APPLE_TEAM_ID: "TEAM123456", AUTH_APPLE_KEY_ID: "KEY1234567" });
    expect(oneLine.presets.apple?.appleKey).toMatchObject({ teamId: "TEAM123456", keyId: "KEY1234567" });
    expect(oauthDefinitions(oneLine)[0]!.makeClientSecret).toBeTypeOf("function");
    const ready = testConfig({ AUTH_APPLE_ID: "com.example.web", AUTH_APPLE_SECRET: "eyJhbGciOiJFUzI1NiJ9.e30.sig" });
    expect(ready.presets.apple).toEqual({ clientId: "com.example.web", clientSecret: "eyJhbGciOiJFUzI1NiJ9.e30.sig" });
    expect(oauthDefinitions(ready)[0]!.makeClientSecret).toBeUndefined();
  });
});
