// The environment every test worker starts from (applied by setup-env.ts).

/** Fixed so that tokens and cookies minted in one place verify in another (≥ 32 characters). */
export const TEST_AUTH_SECRET = "vestibule-test-secret-0123456789abcdef0123456789";

/**
 * Removes what the developer's shell may carry into the tests (AUTH_URL, an OIDC issuer or SMTP
 * server, presets, DATABASE_URL, …) and sets the fixed test values.
 */
export function resetTestEnv(env: NodeJS.ProcessEnv = process.env) {
  for (const name of Object.keys(env)) {
    if (name.startsWith("AUTH_") || name === "DATABASE_URL" || name === "VESTIBULE_DATA_DIR") delete env[name];
  }
  env.NODE_ENV = "test";
  env.AUTH_SECRET = TEST_AUTH_SECRET;
}
