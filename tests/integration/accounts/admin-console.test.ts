// /admin (issue 21, ADR 085) through React Router's whole pipeline, against this
// file's database: an admin finds users (accents and case ignored, 50 a page), opens one and acts
// on them; everyone else — signed out, a plain user, a forged POST — gets the unknown-URL page
// and changes nothing; an admin's copied cookie past the recent sign-in window changes nothing.
import { waitUntil } from "../../support/wait.ts";
import { isSecurityNotice } from "../../support/smtp-sink.ts";
import { beforeAll, describe, expect, it } from "vitest";
import { setRole } from "../../../app/auth/accounts/admin.server.ts";
import { db } from "../../../app/db/client.server.ts";
import { appHandler } from "../../support/app-handler.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { runScript } from "../../support/cli.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar, fetchCsrf, get, ORIGIN, post } from "../../support/http.ts";
import { sessionOf } from "../../support/oauth-flow.ts";
import { configure, smtpEnv, useSmtpSink } from "../email/helpers.ts";

const smtp = useSmtpSink();

let handle: (request: Request) => Promise<Response>;
beforeAll(async () => {
  handle = await appHandler();
});

async function send(request: Request, jar?: CookieJar): Promise<Response> {
  const res = await handle(request);
  jar?.apply(res);
  return res;
}

/** The unknown-URL page, but for its per-page nonce and the asked path (the language menu returns to it). */
async function page404(res: Response, path: string) {
  const body = (await res.text()).replaceAll(/nonce="[^"]*"/g, "").replaceAll(path, "/<path>");
  return { status: res.status, type: res.headers.get("Content-Type"), body };
}

async function ordinary404(method: "GET" | "POST" = "GET", jar?: CookieJar) {
  const req = method === "GET" ? get("/no-such-page", { jar }) : post("/no-such-page", {}, { jar, headers: { Origin: ORIGIN } });
  return page404(await send(req), "/no-such-page");
}

/** A signed-in admin's jar (ada@example.com), and their id. */
async function signedInAdmin(email = "admin@example.com") {
  const admin = await createUser(email, "Admin");
  await setRole(email, "admin", { source: "cli" });
  const { jar } = await signIn(new CookieJar(), email);
  return { admin, jar };
}

/** A form's CSRF token from a page's HTML. */
function csrfIn(html: string): string {
  const token = /name="csrfToken" value="([0-9a-f|]+)"/.exec(html)?.[1];
  if (!token) throw new Error("no CSRF token on the page");
  return token;
}

async function userPage(jar: CookieJar, id: string) {
  const res = await send(get(`/admin/users/${id}`, { jar }), jar);
  const html = await res.text();
  return { res, html };
}

async function act(jar: CookieJar, id: string, fields: Record<string, string>, csrf?: string) {
  const token = csrf ?? csrfIn((await userPage(jar, id)).html);
  return send(post(`/admin/users/${id}`, { csrfToken: token, ...fields }, { jar, headers: { Origin: ORIGIN } }), jar);
}

async function eventsOf(type: string) {
  return (await testDb().authEvent.findMany({ where: { type }, orderBy: { at: "asc" } })).map((e) => ({ userId: e.userId, detail: JSON.parse(e.detail ?? "{}") }));
}

/** The ids listed on an /admin page and its next-page link. */
function listed(html: string) {
  const ids = [...html.matchAll(/data-user-id="([^"]+)"/g)].map((m) => m[1]!);
  const next = /<a href="([^"]*)" rel="next"/.exec(html)?.[1]?.replaceAll("&amp;", "&") ?? null;
  return { ids, next };
}

describe(`/admin for everyone but an admin (${dbLabel})`, () => {
  it("a signed-out visitor and a signed-in user get the unknown-URL page for every /admin URL; a user's forged POST changes nothing", async () => {
    const target = await createUser("grace@example.com", "Grace");
    const paths = ["/admin", "/admin/", "/admin/users", `/admin/users/${target.id}`, "/admin/users/nobody", "/admin/anything/else", "/admin?q=grace"];
    const signedOut = await ordinary404();
    for (const path of paths) expect(await page404(await send(get(path)), path), path).toEqual(signedOut);

    await createUser("ada@example.com", "Ada");
    const { jar, csrfToken } = await signIn(new CookieJar(), "ada@example.com");
    const asUser = await ordinary404("GET", jar);
    for (const path of paths) expect(await page404(await send(get(path, { jar })), path), path).toEqual(asUser);

    const posted = await ordinary404("POST", jar);
    for (const intent of ["disable", "end-sessions", "send-reset", "second-factor-off"]) {
      const res = await send(post(`/admin/users/${target.id}`, { csrfToken, intent }, { jar, headers: { Origin: ORIGIN } }));
      expect(await page404(res, `/admin/users/${target.id}`), intent).toEqual(posted);
    }
    const roleRes = await send(post(`/admin/users/${target.id}`, { csrfToken, intent: "set-role", role: "admin" }, { jar, headers: { Origin: ORIGIN } }));
    expect(roleRes.status).toBe(404);
    const after = await testDb().user.findUniqueOrThrow({ where: { id: target.id } });
    expect({ role: after.role, disabledAt: after.disabledAt }).toEqual({ role: "user", disabledAt: null });
    expect(await testDb().authEvent.count({ where: { userId: target.id, type: { notIn: ["user-created"] } } })).toBe(0);
    // Nothing but the user's own new-browser sign-in notice (ADR 081).
    expect(smtp.sink.messages.filter((m) => !isSecurityNotice(m) || !/New sign-in/.test(m.subject ?? ""))).toHaveLength(0);
  });
});

describe(`/admin for an admin (${dbLabel})`, () => {
  it("an admin searching 'jose' or 'JOSÉ' finds José, Jose and JOSÉ by name, and addresses in any case", async () => {
    const { jar } = await signedInAdmin();
    for (const [email, name] of [
      ["one@example.com", "José Núñez"],
      ["two@example.com", "jose nunez"],
      ["three@example.com", "JOSÉ"],
      ["four@example.com", "Joseph"],
      ["five@example.com", "Josiane"],
      ["Jose.Mail@Example.org", null],
    ] as const) {
      await db().user.create({ data: { email: email.toLowerCase(), name } });
    }
    const names = async (q: string) => {
      const res = await send(get(`/admin?${new URLSearchParams({ q })}`, { jar }), jar);
      expect(res.status).toBe(200);
      const page = await res.text();
      return [...page.matchAll(/<tr data-user-id="[^"]+"><td[^>]*><a [^>]*>([^<]*)<\/a>/g)].map((m) => m[1]).sort();
    };
    const joses = ["four@example.com", "jose.mail@example.org", "one@example.com", "three@example.com", "two@example.com"];
    expect(await names("jose")).toEqual(joses);
    expect(await names("JOSÉ")).toEqual(joses);
    expect(await names("  José  ")).toEqual(joses);
    expect(await names("NÚÑEZ")).toEqual(["one@example.com", "two@example.com"]);
    expect(await names("EXAMPLE.ORG")).toEqual(["jose.mail@example.org"]);
    // Wildcards are letters here, not patterns.
    expect(await names("%")).toEqual([]);
    expect(await names("_")).toEqual([]);
    // A renamed user is found by the new name (the folded copy follows every write of the name:
    // an update, and the upsert of npm run user:add).
    await db().user.update({ where: { email: "five@example.com" }, data: { name: "Renée" } });
    expect(await names("renee")).toEqual(["five@example.com"]);
    await createUser("six@example.com", "Ümit Straße");
    expect(await names("UMIT STRASSE")).toEqual(["six@example.com"]);
  });

  it("pages hold 50 users, newest first; the next-page link walks all of them once", async () => {
    const { jar, admin } = await signedInAdmin();
    // Sequential creates: cuids in creation order.
    for (let i = 0; i < 109; i++) await db().user.create({ data: { email: `member${String(i).padStart(3, "0")}@club.test`, name: `Member ${i}` } });
    const seen: string[] = [];
    let url: string | null = "/admin";
    const sizes: number[] = [];
    while (url) {
      const res = await send(get(url, { jar }), jar);
      expect(res.status).toBe(200);
      const { ids, next } = listed(await res.text());
      sizes.push(ids.length);
      seen.push(...ids);
      url = next;
    }
    expect(sizes).toEqual([50, 50, 10]);
    expect(new Set(seen).size).toBe(110);
    expect(seen.at(-1)).toBe(admin.id);
    // The search keeps its term across pages.
    const first = listed(await (await send(get("/admin?q=CLUB.TEST", { jar }))).text());
    expect(first.ids).toHaveLength(50);
    expect(first.next).toContain("q=CLUB.TEST");
  });

  it("a name made to attack the list is shown as text: no markup, no script, the formula as typed", async () => {
    const { jar } = await signedInAdmin();
    const html = "<img src=x onerror=alert(1)>";
    const formula = "=cmd|' /C calc'!A0";
    const a = await db().user.create({ data: { email: "html@example.com", name: html } });
    await db().user.create({ data: { email: "csv@example.com", name: formula } });
    const list = await (await send(get("/admin", { jar }))).text();
    const page = (await userPage(jar, a.id)).html;
    for (const body of [list, page]) {
      expect(body).not.toContain("<img src=x");
      expect(body).not.toContain("onerror=alert(1)>");
    }
    expect(list).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(list).toContain("=cmd|&#x27; /C calc&#x27;!A0");
  });

  it("a name stored before the one name rule with a right-to-left override is shown to the admin with the hidden character named, not as 'Invoice exe.pdf'", async () => {
    const { jar } = await signedInAdmin();
    const tricked = await db().user.create({ data: { email: "old@example.com", name: "Invoice\u202Efdp.exe\u200B" } });
    const list = await (await send(get("/admin?q=old", { jar }))).text();
    const page = (await userPage(jar, tricked.id)).html;
    for (const body of [list, page]) {
      expect(body).not.toMatch(/[\u202e\u200b]/);
      expect(body).toContain("Invoice⟨U+202E⟩fdp.exe⟨U+200B⟩");
    }
  });

  it("a user's page shows ways to sign in, sessions, events, role and state; an unknown id is the unknown-URL page", async () => {
    const { jar } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    await signIn(new CookieJar(), "ada@example.com");
    const { res, html } = await userPage(jar, ada.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("private, no-store");
    expect(html).toMatch(/id="admin-ways">Password</);
    expect(html).toMatch(/id="admin-role">User</);
    expect(html).toMatch(/id="admin-state">Enabled</);
    expect(html).toContain('id="admin-sessions"');
    expect(html).toContain('data-event="signin"');
    expect(html).not.toContain("correct horse");
    // The last 100 events, newest first.
    const at = Date.now();
    await testDb().authEvent.createMany({ data: Array.from({ length: 120 }, (_, i) => ({ type: "signin-failed", userId: ada.id, at: new Date(at + i * 1000) })) });
    const full = (await userPage(jar, ada.id)).html;
    expect(full.match(/<tr data-event="/g)).toHaveLength(100);
    expect(full).not.toContain('data-event="signin"');

    const missing = "cmissing000000000000000000";
    expect(await page404(await send(get(`/admin/users/${missing}`, { jar })), `/admin/users/${missing}`)).toEqual(await ordinary404("GET", jar));
    const token = csrfIn(html);
    const posted = await send(post(`/admin/users/${missing}`, { csrfToken: token, intent: "disable" }, { jar, headers: { Origin: ORIGIN } }));
    expect(await page404(posted, `/admin/users/${missing}`)).toEqual(await ordinary404("POST", jar));
  });

  it("a POST without the CSRF token, or from another site, changes nothing", async () => {
    const { jar } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    const noToken = await send(post(`/admin/users/${ada.id}`, { intent: "disable" }, { jar, headers: { Origin: ORIGIN } }));
    expect(noToken.status).toBe(403);
    const token = csrfIn((await userPage(jar, ada.id)).html);
    const crossSite = await send(post(`/admin/users/${ada.id}`, { csrfToken: token, intent: "disable" }, { jar, headers: { Origin: "https://evil.example" } }));
    expect(crossSite.status).toBe(403);
    expect((await testDb().user.findUniqueOrThrow({ where: { id: ada.id } })).disabledAt).toBeNull();
  });

  it("an admin's cookie past the recent sign-in window changes nothing and is sent to sign in again", async () => {
    const { jar, admin } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    const token = csrfIn((await userPage(jar, ada.id)).html);
    // Past the actions' window (AUTH_REAUTH_MAX_AGE), within the pages' (AUTH_ADMIN_REAUTH_MAX_AGE).
    await testDb().session.updateMany({ where: { userId: admin.id }, data: { authenticatedAt: new Date(Date.now() - 20 * 60_000) } });
    const { html } = await userPage(jar, ada.id);
    expect(html).toContain('id="reauth-hint"');
    const res = await act(jar, ada.id, { intent: "disable" }, token);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("/auth/reauth?callbackUrl=%2Fadmin%2Fusers%2F");
    expect((await testDb().user.findUniqueOrThrow({ where: { id: ada.id } })).disabledAt).toBeNull();
    expect(await eventsOf("user-disabled")).toEqual([]);
  });

  it("an admin's cookie the console refuses (AUTH_ADMIN_REAUTH_MAX_AGE=60 under AUTH_REAUTH_MAX_AGE=600) cannot act either, by form or JSON", async () => {
    configure({ AUTH_ADMIN_REAUTH_MAX_AGE: "60", AUTH_REAUTH_MAX_AGE: "600" });
    const { jar, admin } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    const token = csrfIn((await userPage(jar, ada.id)).html);
    // Two minutes on: past the console's window, within the account pages' one.
    await testDb().session.updateMany({ where: { userId: admin.id }, data: { authenticatedAt: new Date(Date.now() - 2 * 60_000) } });
    const page = await send(get("/admin", { jar }));
    expect(page.status).toBe(403);
    await page.body?.cancel();
    const form = await act(jar, ada.id, { intent: "disable" }, token);
    expect(form.status).toBe(403);
    expect(await form.text()).toContain("/auth/reauth?callbackUrl=%2Fadmin%2Fusers%2F");
    const json = await act(jar, ada.id, { intent: "disable", json: "true" }, token);
    expect(json.status).toBe(403);
    expect(((await json.json()) as { error: string }).error).toBe("ReauthRequired");
    expect((await testDb().user.findUniqueOrThrow({ where: { id: ada.id } })).disabledAt).toBeNull();
    expect(await eventsOf("user-disabled")).toEqual([]);
  });

  for (const strategy of ["jwt", "database"] as const) {
    it(`an old copy of an admin's cookie (${strategy} sessions) reads nothing of the console: pages link to sign in again, .data and JSON requests get 403 ReauthRequired`, async () => {
      configure(smtpEnv(smtp.sink.url, { AUTH_SESSION_STRATEGY: strategy }));
      const { jar, admin } = await signedInAdmin();
      const ada = await createUser("ada@example.com", "Ada");
      expect((await send(get("/admin", { jar }), jar)).status).toBe(200);
      const copy = new CookieJar();
      for (const name of jar.names()) copy.set(name, jar.get(name)!);
      // An hour and a minute later (AUTH_ADMIN_REAUTH_MAX_AGE's default is an hour).
      await testDb().session.updateMany({ where: { userId: admin.id }, data: { authenticatedAt: new Date(Date.now() - 61 * 60_000) } });
      const reauth = (page: string) => `/auth/reauth?${new URLSearchParams({ callbackUrl: page })}`;

      for (const [path, back] of [
        ["/admin", "/admin"],
        ["/admin?q=ada", "/admin?q=ada"],
        [`/admin/users/${ada.id}`, `/admin/users/${ada.id}`],
      ] as const) {
        const res = await send(get(path, { jar: copy }));
        expect(res.status, path).toBe(403);
        const html = await res.text();
        expect(html, path).toContain(`href="${reauth(back).replaceAll("&", "&amp;")}"`);
        expect(html, path).not.toContain("ada@example.com");
      }
      for (const [path, back] of [
        ["/admin.data?_routes=routes%2Fnot-found", "/admin"],
        [`/admin/users/${ada.id}.data?index&_routes=root%2Croutes%2Fnot-found`, `/admin/users/${ada.id}`],
      ] as const) {
        const res = await send(get(path, { jar: copy }));
        expect(res.status, path).toBe(403);
        const body = await res.text();
        expect(body, path).toContain("ReauthRequired");
        expect(body, path).toContain(`${ORIGIN}${reauth(back)}`);
        expect(body, path).not.toMatch(/\.data|_routes|index|ada@example\.com/);
      }
      // A JSON client, reading or acting.
      for (const request of [
        get("/admin", { jar: copy, headers: { "X-Auth-Return-Redirect": "1" } }),
        post(`/admin/users/${ada.id}`, { csrfToken: await fetchCsrf(copy), intent: "disable", json: "true" }, { jar: copy, headers: { Origin: ORIGIN } }),
      ]) {
        const res = await send(request);
        expect(res.status).toBe(403);
        expect(await res.json()).toEqual({ error: "ReauthRequired", url: `${ORIGIN}${reauth(request.method === "GET" ? "/admin" : `/admin/users/${ada.id}`)}` });
      }
      expect((await testDb().user.findUniqueOrThrow({ where: { id: ada.id } })).disabledAt).toBeNull();
      // Everyone else still gets the unknown-URL page: the refusal says nothing to them.
      const { jar: plain } = await signIn(new CookieJar(), "ada@example.com");
      expect((await send(get("/admin", { jar: plain }))).status).toBe(404);
    });
  }

  it("role: the control offers the app's roles (app/auth.config.ts), labelled in the page's language; an unknown role is refused", async () => {
    const { jar } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    const { html } = await userPage(jar, ada.id);
    const control = html.slice(html.indexOf('id="admin-role-select"'), html.indexOf("</select>", html.indexOf('id="admin-role-select"')));
    expect([...control.matchAll(/<option value="([a-z]+)"/g)].map((m) => m[1])).toEqual(["user", "admin", "editor"]);
    expect(control).toContain(">Editor</option>");
    expect((await act(jar, ada.id, { intent: "set-role", role: "editor" })).status).toBe(302);
    expect((await testDb().user.findUniqueOrThrow({ where: { id: ada.id } })).role).toBe("editor");
    expect((await act(jar, ada.id, { intent: "set-role", role: "owner" })).status).toBe(400);
    expect((await testDb().user.findUniqueOrThrow({ where: { id: ada.id } })).role).toBe("editor");
  });

  it("role: an admin makes a user admin and back; the last admin cannot make themselves a user", async () => {
    const { jar, admin } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    expect((await act(jar, ada.id, { intent: "set-role", role: "admin" })).status).toBe(302);
    expect((await testDb().user.findUniqueOrThrow({ where: { id: ada.id } })).role).toBe("admin");
    expect((await act(jar, ada.id, { intent: "set-role", role: "user" })).status).toBe(302);
    const last = await act(jar, admin.id, { intent: "set-role", role: "user" });
    expect(last.status).toBe(409);
    expect(await last.text()).toContain("The last administrator cannot become a user");
    expect((await testDb().user.findUniqueOrThrow({ where: { id: admin.id } })).role).toBe("admin");
    expect((await eventsOf("role-changed")).map((e) => e.detail).filter((d) => d.source === "admin")).toEqual([
      { role: "admin", previous: "user", source: "admin", adminId: admin.id },
      { role: "user", previous: "admin", source: "admin", adminId: admin.id },
    ]);
    // Nor can an admin disable their own account.
    expect((await act(jar, admin.id, { intent: "disable" })).status).toBe(400);
  });

  it("a password-reset e-mail and turning the second factor off: the user is mailed, the admin sees no secret, events name the admin", async () => {
    const { jar, admin } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    await testDb().twoFactorCredential.create({ data: { userId: ada.id, secretSealed: "sealed", confirmedAt: new Date() } });
    await testDb().recoveryCode.createMany({ data: [{ userId: ada.id, hash: "h1" }] as never });
    expect((await userPage(jar, ada.id)).html).toMatch(/id="admin-second-factor">On</);

    const reset = await act(jar, ada.id, { intent: "send-reset" });
    expect(reset.status).toBe(302);
    // Ada's mail only: the admin's own sign-in from a new browser has its security notice (ADR 081).
    const toAda = (count: number) => waitUntil(() => smtp.sink.messages.filter((m) => m.envelope.to.includes("ada@example.com")), (m) => m.length >= count);
    const [mail] = await toAda(1);
    expect(mail!.envelope.to).toEqual(["ada@example.com"]);
    expect(mail!.text).toContain("/auth/reset-password?token=");
    const done = await send(get(reset.headers.get("Location")!, { jar }));
    const donePage = await done.text();
    expect(donePage).toContain("A password-reset e-mail was sent to the user.");
    expect(donePage).not.toContain("reset-password?token=");

    expect((await act(jar, ada.id, { intent: "second-factor-off" })).status).toBe(302);
    expect(await testDb().twoFactorCredential.count({ where: { userId: ada.id } })).toBe(0);
    expect(await testDb().recoveryCode.count({ where: { userId: ada.id } })).toBe(0);
    const messages = await toAda(2);
    expect(messages[1]!.subject).toContain("Two-step sign-in was turned off");

    expect(await eventsOf("email-sent")).toEqual([{ userId: ada.id, detail: { purpose: "reset", source: "admin", adminId: admin.id } }]);
    expect(await eventsOf("two-factor-disabled")).toEqual([{ userId: ada.id, detail: { kind: "totp", source: "admin", adminId: admin.id } }]);
  });

  it("an admin turning off the second factor of a user whose password is short (or of unknown length) is refused, in the page and in the data request; nothing changes", async () => {
    const { jar } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    await testDb().twoFactorCredential.create({ data: { userId: ada.id, secretSealed: "sealed", confirmedAt: new Date() } });
    // 0: chosen below the single-factor floor beside the second factor (ADR 084); null: never recorded.
    for (const floor of [0, null]) {
      await testDb().password.update({ where: { userId: ada.id }, data: { singleFactorFloorMet: floor } });
      const form = await act(jar, ada.id, { intent: "second-factor-off" });
      expect(form.status, String(floor)).toBe(400);
      expect(await form.text()).toContain("The second factor stays on: this user&#x27;s password is shorter than 15 characters");
      const token = csrfIn((await userPage(jar, ada.id)).html);
      const dataRequest = await send(post(`/admin/users/${ada.id}.data`, { csrfToken: token, intent: "second-factor-off" }, { jar, headers: { Origin: ORIGIN } }), jar);
      expect(dataRequest.status).toBe(400);
      expect(await dataRequest.text()).toContain("The second factor stays on");
    }
    expect(await testDb().twoFactorCredential.count({ where: { userId: ada.id } })).toBe(1);
    expect(await eventsOf("two-factor-disabled")).toEqual([]);
    // A password that meets the floor: turned off.
    await testDb().password.update({ where: { userId: ada.id }, data: { singleFactorFloorMet: 15 } });
    expect((await act(jar, ada.id, { intent: "second-factor-off" })).status).toBe(302);
    expect(await testDb().twoFactorCredential.count({ where: { userId: ada.id } })).toBe(0);
  });

  it("npm run user:reset sends the same e-mail, with an event from the command line", { timeout: 120_000 }, async () => {
    const ada = await createUser("ada@example.com", "Ada");
    const env = { ...smtpEnv(smtp.sink.url), AUTH_URL: ORIGIN };
    const [sent, unknown] = await Promise.all([
      runScript("scripts/user-reset.ts", ["--email", "ADA@example.com"], env),
      runScript("scripts/user-reset.ts", ["--email", "nobody@example.com"], env),
    ]);
    expect(sent).toMatchObject({ code: 0 });
    expect(sent.stdout).toContain("ada@example.com: a password-reset e-mail was sent");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no user with the address nobody@example.com");
    // Ada's mail only: the admin's own sign-in from a new browser has its security notice (ADR 081).
    const toAda = (count: number) => waitUntil(() => smtp.sink.messages.filter((m) => m.envelope.to.includes("ada@example.com")), (m) => m.length >= count);
    const [mail] = await toAda(1);
    expect(mail!.envelope.to).toEqual(["ada@example.com"]);
    expect(mail!.text).toContain(`${ORIGIN}/auth/reset-password?token=`);
    expect(await eventsOf("email-sent")).toEqual([{ userId: ada.id, detail: { purpose: "reset", source: "cli" } }]);
  });
});

describe.each(["jwt", "database"] as const)(`an admin disables, enables and signs a user out (${dbLabel}, %s sessions)`, (strategy) => {
  it("disable ends the user's sessions and refuses sign-in; enable restores sign-in; end-sessions signs out; events name the admin", async () => {
    configure({ ...smtpEnv(smtp.sink.url), AUTH_SESSION_STRATEGY: strategy });
    const { jar, admin } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    const { jar: adaJar } = await signIn(new CookieJar(), "ada@example.com");
    expect((await sessionOf(adaJar))?.user.email).toBe("ada@example.com");

    const disabled = await act(jar, ada.id, { intent: "disable" });
    expect(disabled.status).toBe(302);
    expect(disabled.headers.get("Location")).toBe(`/admin/users/${ada.id}?done=disabled`);
    expect(await sessionOf(adaJar)).toBeNull();
    const refused = await signIn(new CookieJar(), "ada@example.com");
    expect(refused.res.headers.get("Location")).toContain("error=CredentialsSignin");
    expect((await userPage(jar, ada.id)).html).toMatch(/id="admin-state">Disabled</);

    expect((await act(jar, ada.id, { intent: "enable" })).status).toBe(302);
    const { jar: again } = await signIn(new CookieJar(), "ada@example.com");
    expect((await sessionOf(again))?.user.email).toBe("ada@example.com");

    expect((await act(jar, ada.id, { intent: "end-sessions" })).status).toBe(302);
    expect(await sessionOf(again)).toBeNull();
    // The admin's own session is untouched.
    expect((await sessionOf(jar))?.user.email).toBe("admin@example.com");

    const named = { source: "admin", adminId: admin.id };
    expect(await eventsOf("user-disabled")).toEqual([{ userId: ada.id, detail: { count: 1, ...named } }]);
    expect(await eventsOf("user-enabled")).toEqual([{ userId: ada.id, detail: named }]);
    expect(await eventsOf("sessions-ended")).toEqual([{ userId: ada.id, detail: { count: 1, ...named } }]);
  });
});

describe(`an admin deletes a user (${dbLabel})`, () => {
  it("typing the word shown deletes the user, their sessions and ways in; the user is mailed; the event names the admin", async () => {
    configure(smtpEnv(smtp.sink.url));
    const { jar, admin } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    const { jar: adaJar } = await signIn(new CookieJar(), "ada@example.com");
    expect((await sessionOf(adaJar))?.user.email).toBe("ada@example.com");
    const { html } = await userPage(jar, ada.id);
    expect(html).toContain('id="admin-delete"');
    smtp.sink.clear();

    const res = await act(jar, ada.id, { intent: "delete", confirm: "DELETE" });
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("/admin?done=deleted");
    expect(await testDb().user.findUnique({ where: { id: ada.id } })).toBeNull();
    expect(await testDb().session.count({ where: { userId: ada.id } })).toBe(0);
    expect(await sessionOf(adaJar)).toBeNull();
    // Ada's notice, whatever the admin's own sign-in from a new browser sent (ADR 081).
    const [notice] = await waitUntil(() => smtp.sink.messages.filter((m) => m.envelope.to.includes("ada@example.com")), (m) => m.length > 0);
    expect(notice!.to).toContain("ada@example.com");
    expect(isSecurityNotice(notice!)).toBe(true);
    expect(await eventsOf("user-deleted")).toEqual([{ userId: ada.id, detail: { count: 1, source: "admin", adminId: admin.id } }]);
    const list = await send(get("/admin?done=deleted", { jar }));
    expect(await list.text()).toContain('id="admin-done"');
    // The admin's own session is untouched; the same address can sign up again.
    expect((await sessionOf(jar))?.user.email).toBe("admin@example.com");
    await createUser("ada@example.com", "Ada again");
  });

  it("a wrong or missing word, the admin's own account and a stale sign-in delete nothing", async () => {
    const { jar, admin } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    for (const confirm of [undefined, "delete", "LÖSCHEN", " DEL ETE "]) {
      const res = await act(jar, ada.id, { intent: "delete", ...(confirm === undefined ? {} : { confirm }) });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("Type DELETE exactly as shown");
    }
    const self = await act(jar, admin.id, { intent: "delete", confirm: "DELETE" });
    expect(self.status).toBe(400);
    expect(await self.text()).toContain("You cannot delete your own account here");
    expect((await userPage(jar, admin.id)).html).not.toContain('id="admin-delete"');

    const token = csrfIn((await userPage(jar, ada.id)).html);
    await testDb().session.updateMany({ where: { userId: admin.id }, data: { authenticatedAt: new Date(Date.now() - 3_600_000) } });
    expect((await act(jar, ada.id, { intent: "delete", confirm: "DELETE" }, token)).status).toBe(403);
    expect(await testDb().user.count({ where: { id: { in: [ada.id, admin.id] } } })).toBe(2);
    expect(await eventsOf("user-deleted")).toEqual([]);
  });

  it("a plain user's forged delete is the unknown-URL page and deletes nothing", async () => {
    const ada = await createUser("ada@example.com", "Ada");
    const bob = await createUser("bob@example.com", "Bob");
    const { jar } = await signIn(new CookieJar(), "bob@example.com");
    const token = csrfIn(await (await send(get("/account", { jar }), jar)).text());
    const forged = await send(post(`/admin/users/${ada.id}`, { csrfToken: token, intent: "delete", confirm: "DELETE" }, { jar, headers: { Origin: ORIGIN } }));
    expect(await page404(forged, `/admin/users/${ada.id}`)).toEqual(await ordinary404("POST", jar));
    expect(await testDb().user.count({ where: { id: { in: [ada.id, bob.id] } } })).toBe(2);
  });
});

describe(`what a user learns of the admin who acted on them (${dbLabel})`, () => {
  it("a user whose sessions an admin ended downloads their data and opens /account: no admin address, device or id", async () => {
    const { jar, admin } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    const token = csrfIn((await userPage(jar, ada.id)).html);
    const adminDevice = "AdminBrowser/9.9 (operator desk)";
    const ended = await send(
      post(`/admin/users/${ada.id}`, { csrfToken: token, intent: "end-sessions" }, { jar, headers: { Origin: ORIGIN, "User-Agent": adminDevice, "X-Forwarded-For": "198.51.100.77" } }),
    );
    expect(ended.status).toBe(302);
    // The audit trail keeps who acted, for the operators.
    const [row] = await testDb().authEvent.findMany({ where: { type: "sessions-ended", userId: ada.id } });
    expect(row!.userAgent).toBe(adminDevice);
    await testDb().authEvent.update({ where: { id: row!.id }, data: { ip: "198.51.100.77" } });

    const { jar: adaJar } = await signIn(new CookieJar(), "ada@example.com");
    const page = await (await send(get("/account", { jar: adaJar }), adaJar)).text();
    const exported = await send(post("/account", { csrfToken: csrfIn(page), intent: "account-export" }, { jar: adaJar, headers: { Origin: ORIGIN } }));
    expect(exported.status).toBe(200);
    const file = await exported.text();
    expect(JSON.parse(file).events.map((e: { type: string }) => e.type)).toContain("sessions-ended");
    for (const text of [file, page]) {
      expect([admin.id, "198.51.100.77", "AdminBrowser", "admin@example.com"].filter((leak) => text.includes(leak))).toEqual([]);
    }
  });

  it("a user mailed after an admin turned their second factor off or deleted them reads no admin device, but that an administrator did it", async () => {
    configure(smtpEnv(smtp.sink.url));
    const { jar } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    const bob = await createUser("bob@example.com", "Bob");
    await testDb().twoFactorCredential.create({ data: { userId: ada.id, secretSealed: "sealed", confirmedAt: new Date() } });
    const adminDevice = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
    for (const [id, fields] of [[ada.id, { intent: "second-factor-off" }], [bob.id, { intent: "delete", confirm: "DELETE" }]] as const) {
      const token = csrfIn((await userPage(jar, id)).html);
      const res = await send(post(`/admin/users/${id}`, { csrfToken: token, ...fields }, { jar, headers: { Origin: ORIGIN, "User-Agent": adminDevice } }));
      expect(res.status).toBe(302);
    }
    const notices = await waitUntil(
      () => smtp.sink.messages.filter((m) => isSecurityNotice(m) && (m.envelope.to.includes("ada@example.com") || m.envelope.to.includes("bob@example.com"))),
      (m) => m.length >= 2,
    );
    for (const notice of notices) {
      expect(notice.text).toContain("An administrator of this site made this change.");
      expect(notice.text).not.toContain("Windows");
      expect(notice.html).not.toContain("Windows");
    }
  });
});

describe.each(["header", "field"] as const)(`an admin's JSON client (json by %s, ${dbLabel})`, (how) => {
  /** An action as a JSON client sends it: X-Auth-Return-Redirect: 1, or json=true in the body. */
  async function actJson(jar: CookieJar, id: string, fields: Record<string, string>, csrf?: string) {
    const token = csrf ?? csrfIn((await userPage(jar, id)).html);
    const body = { csrfToken: token, ...fields, ...(how === "field" ? { json: "true" } : {}) };
    const headers: Record<string, string> = { Origin: ORIGIN, ...(how === "header" ? { "X-Auth-Return-Redirect": "1" } : {}) };
    const res = await send(post(`/admin/users/${id}`, body, { jar, headers }), jar);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it("every action answers {ok, done, url}; every refusal {error, message} with its status, and nothing is rendered around it", async () => {
    configure(smtpEnv(smtp.sink.url));
    const { jar, admin } = await signedInAdmin();
    const ada = await createUser("ada@example.com", "Ada");
    const page = `${ORIGIN}/admin/users/${ada.id}`;
    for (const [fields, done] of [
      [{ intent: "disable" }, "disabled"],
      [{ intent: "enable" }, "enabled"],
      [{ intent: "end-sessions" }, "sessions-ended"],
      [{ intent: "send-reset" }, "reset-sent"],
      [{ intent: "second-factor-off" }, "unchanged"],
      [{ intent: "set-role", role: "admin" }, "role-changed"],
      [{ intent: "set-role", role: "user" }, "role-changed"],
    ] as const) {
      expect(await actJson(jar, ada.id, fields)).toEqual({ status: 200, body: { ok: true, done, url: `${page}?done=${done}` } });
    }
    expect(await actJson(jar, admin.id, { intent: "disable" })).toEqual({ status: 400, body: { error: "Refused", message: "You cannot disable your own account." } });
    expect(await actJson(jar, admin.id, { intent: "set-role", role: "user" })).toEqual({
      status: 409,
      body: { error: "LastAdmin", message: "The last administrator cannot become a user: make someone else an administrator first." },
    });
    const wrongWord = await actJson(jar, ada.id, { intent: "delete", confirm: "nope" });
    expect(wrongWord).toMatchObject({ status: 400, body: { error: "ConfirmationRequired", word: "DELETE", message: expect.stringContaining("DELETE") } });
    expect(await actJson(jar, ada.id, { intent: "explode" })).toMatchObject({ status: 400, body: { error: "InvalidRequest", message: expect.any(String) } });
    expect(await actJson(jar, ada.id, { intent: "disable" }, "f".repeat(64))).toMatchObject({ status: 403, body: { error: "MissingCSRF", message: expect.any(String) } });
    expect(await actJson(jar, ada.id, { intent: "delete", confirm: "DELETE" })).toEqual({ status: 200, body: { ok: true, done: "deleted", url: `${ORIGIN}/admin?done=deleted` } });
    expect(await testDb().user.count({ where: { id: ada.id } })).toBe(0);
  });
});
