// Shortcuts for tests that need a signed-in visitor: a real user, a real CSRF token, a real
// credentials POST through the route action, and the resulting cookies in a jar.
import { resetConfig } from "../../app/auth/core/config.server";
import { upsertCredentialsUser } from "../../app/auth/credentials/users.server";
import * as callbackRoute from "../../app/routes/auth/callback";
import { callRoute, CookieJar, fetchCsrf, post } from "./http";

export const PASSWORD = "correct horse battery staple";

export async function createUser(email = "ada@example.com", name = "Ada") {
  return (await upsertCredentialsUser({ email, password: PASSWORD, name })).user;
}

export async function signIn(jar = new CookieJar(), email = "ada@example.com", password = PASSWORD, extra: Record<string, string> = {}) {
  const csrfToken = await fetchCsrf(jar);
  const res = await callRoute(
    callbackRoute.action,
    post("/auth/callback/credentials", { csrfToken, email, password, ...extra }, { jar }),
    { provider: "credentials" },
  );
  jar.apply(res);
  return { jar, res, csrfToken };
}

/** Switches environment variables for one test and reloads the configuration; returns the undo. */
export function withEnv(vars: Record<string, string | undefined>) {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>) => {
    for (const [k, value] of Object.entries(v)) {
      if (value === undefined) delete process.env[k];
      else process.env[k] = value;
    }
    resetConfig();
  };
  apply(vars);
  return () => apply(before);
}
