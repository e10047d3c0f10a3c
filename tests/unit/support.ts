// Shared set-up for unit tests of the core: a configuration and AuthRequest built from plain values.
import { loadConfig, type AuthConfig } from "../../app/auth/core/config.server";
import { authRequest } from "../../app/auth/core/request.server";

export const SECRET = "unit-test-secret-0123456789abcdef0123456789abcdef";

export function testConfig(env: Record<string, string> = {}): AuthConfig {
  return loadConfig({ NODE_ENV: "test", AUTH_SECRET: SECRET, VESTIBULE_DATA_DIR: process.env.VESTIBULE_DATA_DIR, ...env });
}

export function requestFor(url: string, init: RequestInit & { cookies?: Record<string, string> } = {}, config = testConfig()) {
  const headers = new Headers(init.headers);
  if (init.cookies) {
    headers.set("Cookie", Object.entries(init.cookies).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("; "));
  }
  return authRequest(new Request(url, { ...init, headers }), config);
}
