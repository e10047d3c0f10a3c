// ~/auth, the app's surface (app/auth/index.ts, ADR 118): one shape for every helper, refusals in
// both shapes, ways back that never name a page's data request, roles and permissions from
// app/auth.config.ts, the re-issued session cookie reaching answers whose route dropped it, and
// app forms refused cross-site before their action runs. Real requests through the app's own
// request handler (tests/support/app-handler.ts) and real loaders.
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getSession, requirePermission, requireRecentAuth, requireRole, requireUser } from "../../../app/auth/index.ts";
import { setRole } from "../../../app/auth/accounts/admin.server.ts";
import * as account from "../../../app/routes/account.tsx";
import * as welcome from "../../../app/routes/welcome.tsx";
import * as profile from "../../../app/routes/examples/profile.tsx";
import * as editors from "../../../app/routes/examples/editors.tsx";
import { appHandler } from "../../support/app-handler.ts";
import { createUser, signIn, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, ORIGIN, post } from "../../support/http.ts";
import { runInProcess } from "../../support/cli.ts";
import { sessionUserOf } from "../../support/session-user.ts";

let handle: (request: Request) => Promise<Response>;
beforeAll(async () => {
  handle = await appHandler();
});
beforeEach(() => resetDatabase());
let undo: (() => void)[] = [];
afterEach(() => {
  for (const u of undo.reverse()) u();
  undo = [];
});

/** What a helper throws (a Response), or "passed". */
async function refusal(run: () => Promise<unknown>): Promise<Response | "passed"> {
  try {
    await run();
    return "passed";
  } catch (thrown) {
    if (thrown instanceof Response) return thrown;
    throw thrown;
  }
}

/** A way back that names React Router's data request of a page, anywhere in `text` (decoded or not). */
const DATA_FORM = /\.data\b|_routes|[?&]index\b|%3Findex|%26index|index%3D/;

async function signedInAs(role: "user" | "admin" | "editor" = "user", email = "ada@example.com") {
  await createUser(email, "Ada");
  if (role !== "user") await setRole(email, role, { source: "cli" });
  return (await signIn(new CookieJar(), email)).jar;
}

/** Ages every sign-in of the jar's user past any recent-sign-in window. */
async function ageSignIns(email = "ada@example.com") {
  const user = await testDb().user.findUniqueOrThrow({ where: { email } });
  await testDb().session.updateMany({ where: { userId: user.id }, data: { authenticatedAt: new Date(Date.now() - 86_400_000) } });
}

// The data-request forms of the page /account?tab=1 — JavaScript on (React Router's fetches) —
// and the form a no-JavaScript index form posts to.
const DATA_REQUESTS = ["/examples/profile.data", "/examples/profile.data?_routes=routes%2Fexamples%2Fprofile", "/examples/profile.data?index", "/examples/profile.data?index=&_routes=root", "/examples/profile.data?tab=1&index&_routes=root%2Croutes%2Fexamples%2Fprofile"];

describe(`~/auth helpers: one shape, refusals in both shapes (${dbLabel})`, () => {
  it("getSession: { session: null, headers } signed out; the user, session and headers signed in", async () => {
    const out = await getSession(get("/x"));
    expect(out.session).toBeNull();
    expect(out.headers).toBeInstanceOf(Headers);
    const jar = await signedInAs();
    const { session } = await getSession(get("/x", { jar }));
    const ada = await testDb().user.findUniqueOrThrow({ where: { email: "ada@example.com" } });
    expect(session?.user).toEqual(await sessionUserOf({ id: ada.id, name: "Ada", email: "ada@example.com", image: null }));
    expect(session?.signedInAt).toBeInstanceOf(Date);
  });

  it("every helper returns { user, session, headers } for a user it lets through", async () => {
    const jar = await signedInAs("editor");
    for (const result of [
      await requireUser(get("/x", { jar })),
      await requireRecentAuth(get("/x", { jar })),
      await requireRole(get("/x", { jar }), "editor"),
      await requirePermission(get("/x", { jar }), "notes:edit"),
    ]) {
      expect(result.user.email).toBe("ada@example.com");
      expect(result.session.user).toEqual(result.user);
      expect(result.headers).toBeInstanceOf(Headers);
    }
  });

  it("a page goes to the sign-in page with the page as callbackUrl; its data requests and JSON clients get 401 SessionRequired naming the page", async () => {
    const page = await refusal(() => requireUser(get("/notes?tab=1")));
    expect((page as Response).status).toBe(302);
    expect((page as Response).headers.get("Location")).toBe("/auth/signin?error=SessionRequired&callbackUrl=%2Fnotes%3Ftab%3D1");
    const json = await refusal(() => requireUser(get("/notes?tab=1", { headers: { Accept: "application/json" } })));
    expect((json as Response).status).toBe(401);
    expect(await (json as Response).json()).toEqual({ error: "SessionRequired", url: `${ORIGIN}/auth/signin?error=SessionRequired&callbackUrl=%2Fnotes%3Ftab%3D1` });
    for (const path of ["/notes.data?tab=1", "/notes.data?tab=1&_routes=routes%2Fnotes", "/notes.data?index&tab=1", "/notes.data?tab=1&index=&_routes=root"]) {
      const data = (await refusal(() => requireUser(get(path)))) as Response;
      expect(data.status, path).toBe(401);
      expect(await data.json(), path).toEqual({ error: "SessionRequired", url: `${ORIGIN}/auth/signin?error=SessionRequired&callbackUrl=%2Fnotes%3Ftab%3D1` });
    }
  });

  it("no helper's refusal of a data request, signed out or not allowed, names the data request", async () => {
    const user = await signedInAs("user");
    await createUser("grace@example.com", "Grace");
    const stale = (await signIn(new CookieJar(), "grace@example.com")).jar;
    await ageSignIns("grace@example.com");
    const helpers: [string, (r: Request) => Promise<unknown>][] = [
      ["requireUser", (r) => requireUser(r)],
      ["requireRecentAuth", (r) => requireRecentAuth(r)],
      ["requireRole", (r) => requireRole(r, "editor")],
      ["requirePermission", (r) => requirePermission(r, "notes:edit")],
    ];
    for (const [name, helper] of helpers) {
      for (const path of DATA_REQUESTS) {
        for (const jar of [new CookieJar(), user, stale]) {
          for (const request of [get(path, { jar }), post(path, { x: "1" }, { jar, headers: { Origin: ORIGIN } })]) {
            const answer = await refusal(() => helper(request));
            if (answer === "passed") continue;
            const text = `${answer.headers.get("Location") ?? ""} ${await answer.text()}`;
            expect(text, `${name} ${request.method} ${path}`).not.toMatch(DATA_FORM);
          }
        }
      }
    }
    // The stale sign-in's refusal names the page itself.
    const reauth = (await refusal(() => requireRecentAuth(get("/examples/profile.data?tab=1&index&_routes=root", { jar: stale })))) as Response;
    expect(reauth.status).toBe(403);
    expect(await reauth.json()).toEqual({ error: "ReauthRequired", url: `${ORIGIN}/auth/reauth?callbackUrl=%2Fexamples%2Fprofile%3Ftab%3D1` });
  });
});

describe(`product pages' ways back from their data requests, JavaScript on and off (${dbLabel})`, () => {
  // Through the whole app: the document request (JavaScript off) and React Router's fetch forms.
  const PAGES = ["/account", "/welcome", "/examples/profile", "/examples/editors"];

  it("signed out, each page's document goes to the sign-in page and comes back to the page; its data requests never name themselves", async () => {
    for (const page of PAGES) {
      const doc = await handle(get(`${page}?x=1`));
      expect(doc.status, page).toBe(302);
      expect(doc.headers.get("Location"), page).toBe(`/auth/signin?error=SessionRequired&callbackUrl=${encodeURIComponent(`${page}?x=1`)}`);
      const route = `routes${page.replace("/account/email", "/account-email")}`.replace(/\//g, "%2F");
      for (const path of [`${page}.data?x=1`, `${page}.data?x=1&_routes=root%2C${route}`, `${page}.data?x=1&index`, `${page}.data?index=&x=1`]) {
        const answer = await handle(get(path));
        const text = `${answer.headers.get("Location") ?? ""} ${answer.headers.get("X-Remix-Redirect") ?? ""} ${await answer.text()}`;
        expect(text, path).toContain(encodeURIComponent(`${page}?x=1`));
        expect(text, path).not.toMatch(DATA_FORM);
      }
    }
  });

  it("signed out, a form posted with JavaScript (the .data action) or without it is answered with a way back to the page", async () => {
    for (const page of ["/account", "/examples/profile", "/examples/editors"]) {
      for (const path of [page, `${page}?index`, `${page}.data`, `${page}.data?index&_routes=root`]) {
        const answer = await handle(post(path, { intent: "x" }, { headers: { Origin: ORIGIN } }));
        const text = `${answer.headers.get("Location") ?? ""} ${answer.headers.get("X-Remix-Redirect") ?? ""} ${await answer.text()}`;
        expect(text, path).toContain(encodeURIComponent(page));
        expect(text, path).not.toMatch(DATA_FORM);
      }
    }
  });

  it("/admin, signed out or not an admin, is the unknown-URL page in every form", async () => {
    const user = await signedInAs("user");
    for (const jar of [new CookieJar(), user]) {
      for (const path of ["/admin", "/admin?index", "/admin.data", "/admin.data?_routes=routes%2Fnot-found&index"]) {
        const answer = await handle(get(path, { jar }));
        expect(answer.status, path).toBe(404);
        expect(await answer.text(), path).not.toMatch(/callbackUrl|error=SessionRequired/);
      }
    }
  });

  it("the route modules alone: /account's and /welcome's loaders answer a data request with 401 naming the page", async () => {
    for (const [loader, page] of [
      [account.loader, "/account"],
      [welcome.loader, "/welcome"],
      [profile.loader, "/examples/profile"],
    ] as const) {
      const answer = await callRoute(loader, get(`${page}.data?index&_routes=root`));
      expect(answer.status, page).toBe(401);
      expect(await answer.json(), page).toEqual({ error: "SessionRequired", url: `${ORIGIN}/auth/signin?error=SessionRequired&callbackUrl=${encodeURIComponent(page)}` });
    }
  });
});

describe(`a JSON client of a page gets the refusal's JSON, not the error page (${dbLabel})`, () => {
  it("signed out, not allowed, signed in too long ago: 401 / 403 JSON through the whole app", async () => {
    const json = { Accept: "application/json" };
    const out = await handle(get("/examples/profile?tab=1", { headers: json }));
    expect(out.status).toBe(401);
    expect(await out.json()).toEqual({ error: "SessionRequired", url: `${ORIGIN}/auth/signin?error=SessionRequired&callbackUrl=%2Fexamples%2Fprofile%3Ftab%3D1` });
    const jar = await signedInAs("user");
    const notEditor = await handle(get("/examples/editors", { jar, headers: json }));
    expect(notEditor.status).toBe(403);
    expect(await notEditor.json()).toEqual({ error: "Forbidden" });
    await ageSignIns();
    const stale = await handle(post("/examples/profile", { csrfToken: "x" }, { jar, headers: { ...json, Origin: ORIGIN } }));
    expect(stale.status).toBe(403);
    expect(await stale.json()).toEqual({ error: "ReauthRequired", url: `${ORIGIN}/auth/reauth?callbackUrl=%2Fexamples%2Fprofile` });
    // The same refusals to a browser are pages.
    const page = await handle(get("/examples/editors", { jar }));
    expect(page.headers.get("Content-Type")).toMatch(/^text\/html/);
  });
});

describe(`roles and permissions from app/auth.config.ts (${dbLabel})`, () => {
  it("requireRole: the role named passes, any other gets 403 (the page in the visitor's language, or JSON), or the unknown-URL 404 when hidden", async () => {
    const jar = await signedInAs("user");
    const forbidden = (await refusal(() => requireRole(get("/x", { jar }), "editor"))) as Response;
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual({ error: "Forbidden" });
    const hidden = (await refusal(() => requireRole(get("/x", { jar }), "editor", { hide: true }))) as Response;
    expect(hidden.status).toBe(404);
    // The page: the "not allowed" page, in French for a French visitor.
    const page = await handle(get("/examples/editors", { jar, headers: { "Accept-Language": "fr" } }));
    expect(page.status).toBe(403);
    expect(await page.text()).toContain("Accès refusé");
    // A role change applies at the next request.
    await setRole("ada@example.com", "editor", { source: "cli" });
    expect((await requireRole(get("/x", { jar }), ["editor", "admin"])).role).toBe("editor");
    const shown = await handle(get("/examples/editors", { jar }));
    expect(shown.status).toBe(200);
    expect(await shown.text()).toContain("Your role: editor.");
  });

  it("requirePermission: the role's permissions, an admin's every permission, a user's none", async () => {
    const ada = await signedInAs("editor", "ada@example.com");
    const grace = await signedInAs("admin", "grace@example.com");
    const alan = await signedInAs("user", "alan@example.com");
    expect((await requirePermission(get("/x", { jar: ada }), "notes:edit")).role).toBe("editor");
    expect((await requirePermission(get("/x", { jar: grace }), "notes:edit")).role).toBe("admin");
    expect(((await refusal(() => requirePermission(get("/x", { jar: alan }), "notes:edit"))) as Response).status).toBe(403);
    // An admin is not an editor: requireRole names roles, not rank.
    expect(((await refusal(() => requireRole(get("/x", { jar: grace }), "editor"))) as Response).status).toBe(403);
    // @ts-expect-error A permission no role of app/auth.config.ts grants does not type-check.
    await refusal(() => requirePermission(get("/x", { jar: ada }), "notes:delete"));
    // @ts-expect-error Nor does a role it does not name.
    await refusal(() => requireRole(get("/x", { jar: ada }), "owner"));
  });

  it("the example form: an editor publishes; a user's post is refused before the form is read", async () => {
    const ada = await signedInAs("editor");
    const page = await callRoute(editors.loader, get("/examples/editors", { jar: ada }));
    ada.apply(page);
    const { csrfToken } = (await page.json()) as { csrfToken: string };
    expect(await (await callRoute(editors.action, post("/examples/editors", { csrfToken }, { jar: ada }))).json()).toEqual({ published: true });
    expect((await callRoute(editors.action, post("/examples/editors", { csrfToken: "0".repeat(64) }, { jar: ada }))).status).toBe(403);
    await setRole("ada@example.com", "user", { source: "cli" });
    expect((await callRoute(editors.action, post("/examples/editors", { csrfToken }, { jar: ada }))).status).toBe(403);
  });

  it("npm run user:role takes the app's roles, and names them when given another", async () => {
    await createUser("ada@example.com", "Ada");
    expect((await runInProcess("scripts/user-role.ts", ["--email", "ada@example.com", "--role", "editor"])).code).toBe(0);
    expect((await testDb().user.findUniqueOrThrow({ where: { email: "ada@example.com" } })).role).toBe("editor");
    const wrong = await runInProcess("scripts/user-role.ts", ["--email", "ada@example.com", "--role", "owner"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("user, admin, editor");
  });
});

describe(`the re-issued session cookie reaches answers whose route drops it (${dbLabel})`, () => {
  for (const strategy of ["jwt", "database"] as const) {
    it(`${strategy} sessions: a page, its data request and its action all carry the re-issued cookie though the route passes no session headers`, async () => {
      undo.push(withEnv({ AUTH_SESSION_STRATEGY: strategy, AUTH_SESSION_UPDATE_AGE: "0" }));
      const jar = await signedInAs();
      const before = jar.get("authjs.session-token");
      // The route module alone drops it: requireUser's headers are not in its answer.
      const alone = await callRoute(profile.loader, get("/examples/profile", { jar }));
      expect(alone.headers.getSetCookie().some((c) => c.startsWith("authjs.session-token="))).toBe(false);
      for (const request of [
        get("/examples/profile", { jar }),
        get("/examples/profile.data?_routes=routes%2Fexamples%2Fprofile", { jar }),
        post("/examples/profile", { csrfToken: "x" }, { jar, headers: { Origin: ORIGIN } }),
      ]) {
        const answer = await handle(request);
        const cookies = answer.headers.getSetCookie().filter((c) => c.startsWith("authjs.session-token="));
        expect(cookies, `${request.method} ${request.url}`).toHaveLength(1);
        expect(cookies[0]).not.toMatch(/Max-Age=0/);
        if (strategy === "jwt") expect(cookies[0]).not.toContain(`authjs.session-token=${before};`);
        else expect(cookies[0]).toContain(`authjs.session-token=${before};`);
      }
    });
  }

  it("a route that sets the session cookie itself keeps its own: one cookie, the route's (a sign-out)", async () => {
    undo.push(withEnv({ AUTH_SESSION_UPDATE_AGE: "0" }));
    const jar = await signedInAs();
    const csrf = await handle(get("/auth/csrf", { jar }));
    jar.apply(csrf);
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const out = await handle(post("/auth/signout", { csrfToken }, { jar, headers: { Origin: ORIGIN } }));
    const cookies = out.headers.getSetCookie().filter((c) => c.startsWith("authjs.session-token="));
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatch(/Max-Age=0|Expires=Thu, 01 Jan 1970/);
  });
});

describe(`app forms refused cross-site before their action runs (${dbLabel})`, () => {
  it("a POST whose Origin or Sec-Fetch-Site names another site gets 403: the page in the visitor's language, JSON for a JSON client", async () => {
    const jar = await signedInAs();
    const page = await callRoute(profile.loader, get("/examples/profile", { jar }));
    jar.apply(page);
    const { csrfToken } = (await page.json()) as { csrfToken: string };
    // Control: the same form from the app's own page goes through.
    const own = await handle(post("/examples/profile", { csrfToken }, { jar, headers: { Origin: ORIGIN, "Sec-Fetch-Site": "same-origin" } }));
    expect(own.status).toBe(200);
    expect(await own.text()).toContain("Confirmed: you signed in moments ago.");
    const crossSite: Record<string, string>[] = [{ Origin: "https://evil.example" }, { "Sec-Fetch-Site": "cross-site" }, { Origin: "null" }, { Origin: ORIGIN, "Sec-Fetch-Site": "cross-site" }];
    for (const headers of crossSite) {
      const answer = await handle(post("/examples/profile", { csrfToken }, { jar, headers: { ...headers, "Accept-Language": "de" } }));
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      const html = await answer.text();
      expect(html).toContain("Nicht erlaubt");
      expect(html).not.toContain("Bestätigt");
      const json = await handle(post("/examples/profile", { csrfToken }, { jar, headers: { ...headers, Accept: "application/json" } }));
      expect(json.status).toBe(403);
      expect(await json.json()).toEqual({ error: "Forbidden" });
      const data = await handle(post("/examples/profile.data", { csrfToken }, { jar, headers }));
      expect(data.status).toBe(403);
      expect(await data.text()).not.toContain("confirmed");
    }
  });
});
