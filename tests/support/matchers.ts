// Custom matchers for auth responses: `expect(res).toHaveRedirect("/x")`,
// `expect(res).toHaveSessionCookie()`, `expect(res).toHaveErrorRedirect("CredentialsSignin")`.
import { expect } from "vitest";
import { ORIGIN } from "./http";

const SESSION_COOKIE = /^(__Secure-)?authjs\.session-token(\.\d+)?=([^;]+)/;

function locationOf(res: Response): string | null {
  return res.headers.get("Location");
}

function sameTarget(actual: string, expected: string) {
  return new URL(actual, ORIGIN).href === new URL(expected, ORIGIN).href;
}

expect.extend({
  toHaveRedirect(received: Response, expected?: string) {
    const location = locationOf(received);
    const isRedirect = received.status >= 300 && received.status < 400 && location !== null;
    const pass = isRedirect && (expected === undefined || sameTarget(location!, expected));
    return {
      pass,
      message: () =>
        `expected a redirect${expected ? ` to ${expected}` : ""}${this.isNot ? " not" : ""}, got status ${received.status}${location ? ` → ${location}` : ""}`,
    };
  },
  toHaveErrorRedirect(received: Response, code: string) {
    const location = locationOf(received);
    const url = location ? new URL(location, ORIGIN) : null;
    const pass = received.status === 302 && url?.searchParams.get("error") === code;
    return {
      pass,
      message: () => `expected a redirect with ?error=${code}, got status ${received.status}${location ? ` → ${location}` : ""}`,
    };
  },
  toHaveSessionCookie(received: Response) {
    const cookies = received.headers.getSetCookie();
    const pass = cookies.some((c) => {
      const m = SESSION_COOKIE.exec(c);
      return m !== null && m[3] !== "" && !/Max-Age=0/i.test(c);
    });
    return {
      pass,
      message: () => `expected ${this.isNot ? "no " : "a "}session cookie to be set; Set-Cookie: ${JSON.stringify(cookies)}`,
    };
  },
});

interface AuthMatchers<R = unknown> {
  toHaveRedirect(location?: string): R;
  toHaveErrorRedirect(code: string): R;
  toHaveSessionCookie(): R;
}

declare module "vitest" {
  interface Matchers<R extends void | Promise<void> = void | Promise<void>, T = unknown> extends AuthMatchers<R> {}
}
