// Which host an e-mailed link may name ( AUTH_TRUST_HOST, docs/decisions/105): with
// AUTH_URL, always AUTH_URL, whatever Host or X-Forwarded-Host say; with AUTH_TRUST_HOST=true and
// no AUTH_URL, only a host of AUTH_ALLOWED_HOSTS, and a request naming another one — forwarded or
// in its own Host — is refused with 400 {"error":"UntrustedHost"} before any action runs. Requests
// go through the app's root middleware and the route's real action, as React Router runs them.
import { describe, expect, it } from "vitest";
import * as forgotPassword from "../../../app/routes/auth/forgot-password";
import * as signinProvider from "../../../app/routes/auth/signin-provider";
import { mailSenderIdle } from "../../../app/mail/queue.server";
import { createUser } from "../../support/auth";
import { dbLabel } from "../../support/db";
import { callRoute, CookieJar, post, routeArgs } from "../../support/http";
import { linkIn } from "../../support/smtp-sink";
import { configure, csrfFor, useSmtpSink } from "../email/helpers";
import { runWithRootMiddleware } from "../../support/root-middleware";

const smtp = useSmtpSink();

/** The root middlewares around the route's action, as React Router runs a POST. */
function run(action: (args: any) => unknown, request: Request, params: Record<string, string> = {}): Promise<Response> {
  return runWithRootMiddleware(action, request, params);
}

type Ask = { headers?: Record<string, string>; origin?: string; json?: boolean };

/** POST /auth/forgot-password for ada@example.com (the CSRF token fetched with the same headers). */
async function askReset({ headers = {}, origin, json = false }: Ask) {
  const jar = new CookieJar();
  const csrfToken = await csrfFor(jar, headers);
  const all = json ? { ...headers, "X-Auth-Return-Redirect": "1" } : headers;
  return run(forgotPassword.action, post("/auth/forgot-password", { csrfToken, email: "ada@example.com" }, { jar, headers: all, origin }));
}

/** POST /auth/signin/email for ada@example.com. */
async function askLink({ headers = {}, origin, json = false }: Ask) {
  const jar = new CookieJar();
  const csrfToken = await csrfFor(jar, headers);
  const all = json ? { ...headers, "X-Auth-Return-Redirect": "1" } : headers;
  return run(signinProvider.action, post("/auth/signin/email", { csrfToken, email: "ada@example.com" }, { jar, headers: all, origin }), { provider: "email" });
}

const FORGED = { "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https" };
const LISTED = { "X-Forwarded-Host": "app.example.com", "X-Forwarded-Proto": "https" };

describe(`AUTH_TRUST_HOST with AUTH_ALLOWED_HOSTS and no AUTH_URL (${dbLabel})`, () => {
  it("an attacker's POST with X-Forwarded-Host: evil.example is refused 400 UntrustedHost, form and JSON alike, and nobody is mailed", async () => {
    configure({ AUTH_URL: undefined, AUTH_TRUST_HOST: "true", AUTH_ALLOWED_HOSTS: "app.example.com,www.example.com" });
    await createUser();
    for (const json of [false, true]) {
      for (const ask of [askReset, askLink]) {
        const res = await ask({ headers: FORGED, json });
        expect(res.status, `${ask.name} json=${json}`).toBe(400);
        expect(res.headers.get("Content-Type")).toBe("application/json");
        expect(await res.json()).toEqual({ error: "UntrustedHost" });
        expect(res.headers.get("Location")).toBeNull();
        expect(res.headers.getSetCookie()).toEqual([]);
      }
    }
    // A listed host is served: its e-mail is the first and only one the sink receives.
    const served = await askReset({ headers: LISTED });
    expect(served.status).toBe(302);
    expect(served.headers.get("Location")).toBe("https://app.example.com/auth/verify-request?provider=email&type=reset");
    const messages = await smtp.sink.waitFor(1);
    await mailSenderIdle();
    expect(smtp.sink.messages).toHaveLength(1);
    expect(linkIn(messages[0]!).origin).toBe("https://app.example.com");
    expect(messages[0]!.text).not.toContain("evil.example");
  });

  it("a listed host is matched without case and with its port only when the list names one", async () => {
    configure({ AUTH_URL: undefined, AUTH_TRUST_HOST: "true", AUTH_ALLOWED_HOSTS: "app.example.com,www.example.com:8443" });
    await createUser();
    const upper = await askLink({ headers: { "X-Forwarded-Host": "APP.Example.COM:8443", "X-Forwarded-Proto": "https" } });
    expect(upper.status).toBe(302);
    expect(linkIn((await smtp.sink.waitFor(1))[0]!).origin).toBe("https://app.example.com:8443");
    expect((await askLink({ headers: { "X-Forwarded-Host": "www.example.com:8443", "X-Forwarded-Proto": "https" } })).status).toBe(302);
    expect((await askLink({ headers: { "X-Forwarded-Host": "www.example.com", "X-Forwarded-Proto": "https" } })).status).toBe(400);
    // The first value of a list is the one that counts, and it is the one checked.
    expect((await askLink({ headers: { "X-Forwarded-Host": "evil.example, app.example.com", "X-Forwarded-Proto": "https" } })).status).toBe(400);
    // A value that is no host at all is not skipped over to the Host header: it is refused too.
    expect((await askLink({ headers: { "X-Forwarded-Host": "app.example.com/evil", "X-Forwarded-Proto": "https" } })).status).toBe(400);
  });

  it("without X-Forwarded-Host, a request whose own Host is not listed is refused too", async () => {
    configure({ AUTH_URL: undefined, AUTH_TRUST_HOST: "true", AUTH_ALLOWED_HOSTS: "app.example.com" });
    await createUser();
    const res = await askReset({ origin: "http://evil.example" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "UntrustedHost" });
    const listed = await askReset({ origin: "http://app.example.com" });
    expect(listed.status).toBe(302);
    expect(linkIn((await smtp.sink.waitFor(1))[0]!).origin).toBe("http://app.example.com");
  });
});

describe(`AUTH_URL set (${dbLabel})`, () => {
  for (const trustHost of ["true", "false"]) {
    it(`an attacker's Host and X-Forwarded-Host never reach a reset or sign-in link (AUTH_TRUST_HOST=${trustHost})`, async () => {
      configure({ AUTH_URL: "https://app.example.com", AUTH_TRUST_HOST: trustHost, AUTH_ALLOWED_HOSTS: undefined });
      await createUser();
      const reset = await askReset({ headers: FORGED, origin: "http://evil.example" });
      expect(reset.headers.get("Location")).toBe("https://app.example.com/auth/verify-request?provider=email&type=reset");
      const link = await askLink({ headers: FORGED, origin: "http://evil.example" });
      expect(link.headers.get("Location")).toBe("https://app.example.com/auth/verify-request?provider=email&type=email");
      const messages = await smtp.sink.waitFor(2);
      for (const message of messages) {
        expect(linkIn(message).origin).toBe("https://app.example.com");
        expect(message.text).not.toContain("evil.example");
        expect(message.html).not.toContain("evil.example");
      }
    });
  }
});
