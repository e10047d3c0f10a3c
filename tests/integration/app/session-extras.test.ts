// session({ user }) of app/auth.config.ts (ADR 119): extra claims of the session's user, in
// GET /auth/session, the root loader's session (useSession() from ~/auth/react) and ~/auth's
// user — never replacing id, name, email or image. jwt sessions keep them in the cookie (chunked
// when large) and compute them again at each re-issue; database sessions read them at each read.
// The test gives the app's configuration a session function for its own duration.
import { afterEach, describe, expect, it } from "vitest";
import authConfig from "../../../app/auth.config.ts";
import type { SessionUserRow } from "../../../app/auth/config.ts";
import { requireUser } from "../../../app/auth/index.ts";
import * as root from "../../../app/root.tsx";
import * as sessionRoute from "../../../app/routes/auth/session.ts";
import { createUser, signIn, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get } from "../../support/http.ts";
import { appHandler } from "../../support/app-handler.ts";
import { sessionUserLike, sessionUserOf } from "../../support/session-user.ts";
import { beforeEach } from "vitest";
import guideConfig from "./guide-auth-config.ts";

type SessionFunction = (args: { user: SessionUserRow }) => Record<string, unknown>;
const config = authConfig as { session?: SessionFunction };
const original = config.session;
let undo: (() => void)[] = [];
beforeEach(() => resetDatabase());
afterEach(() => {
  config.session = original;
  for (const u of undo.reverse()) u();
  undo = [];
});

/** The guide's function (tests/integration/app/guide-auth-config.ts), with more claims when a test adds them. */
function useExtras(extra: (user: SessionUserRow) => Record<string, unknown> = () => ({})) {
  const guide = guideConfig.session!;
  config.session = ({ user }) => ({ ...guide({ user }), ...extra(user) });
}

async function sessionUser(jar: CookieJar) {
  const res = await callRoute(sessionRoute.loader, get("/auth/session", { jar }));
  jar.apply(res);
  return ((await res.json()) as { user?: Record<string, unknown> } | null)?.user;
}

for (const strategy of ["jwt", "database"] as const) {
  describe(`session({ user }) with ${strategy} sessions (${dbLabel})`, () => {
    beforeEach(() => {
      undo.push(withEnv({ AUTH_SESSION_STRATEGY: strategy }));
    });

    it("adds its claims to GET /auth/session's user, the root loader's session and ~/auth's user, and never replaces the layer's own", async () => {
      useExtras(() => ({ plan: "pro", name: "Mallory", email: "mallory@example.com", image: "https://evil.example/x.png", id: "someone-else" }));
      const ada = await createUser("ada@example.com", "Ada");
      const { jar } = await signIn(new CookieJar(), "ada@example.com");
      expect(await sessionUser(jar)).toEqual({ name: "Ada", email: "ada@example.com", image: null, role: "user", locale: null, plan: "pro" });
      const layout = await callRoute(root.loader, get("/", { jar }));
      expect(((await layout.json()) as { session: { user: unknown } }).session.user).toEqual({ name: "Ada", email: "ada@example.com", image: null, role: "user", locale: null, plan: "pro" });
      const { user } = await requireUser(get("/x", { jar }));
      expect(user).toEqual({ id: ada.id, name: "Ada", email: "ada@example.com", image: null, role: "user", locale: null, plan: "pro" });
    });

    it("the layer's own tests' expectation (tests/support/session-user.ts) holds the app's claims, and is exact without them", async () => {
      await createUser("ada@example.com", "Ada");
      const { jar } = await signIn(new CookieJar(), "ada@example.com");
      const known = { name: "Ada", email: "ada@example.com", image: null };
      expect(await sessionUserOf(known)).toEqual(known);
      expect(await sessionUser(jar)).toEqual(await sessionUserOf(known));
      useExtras(() => ({ plan: "pro" }));
      const withClaims = await sessionUserOf(known);
      expect(withClaims).toEqual({ ...known, role: "user", locale: null, plan: "pro" });
      undo.push(withEnv({ AUTH_SESSION_UPDATE_AGE: "0" })); // a jwt cookie takes the claims at its re-issue
      const { jar: again } = await signIn(new CookieJar(), "ada@example.com");
      expect(await sessionUser(again)).toEqual(withClaims);
      expect(await sessionUser(again)).toEqual(sessionUserLike(known));
      expect({ ...known, plan: "pro" }).not.toEqual(await sessionUserOf(known));
    });

    it("a change to the user shows: at the next read (database), at the next re-issue (jwt)", async () => {
      undo.push(withEnv({ AUTH_SESSION_UPDATE_AGE: "0" }));
      useExtras();
      await createUser("ada@example.com", "Ada");
      const { jar } = await signIn(new CookieJar(), "ada@example.com");
      expect((await sessionUser(jar))?.role).toBe("user");
      await testDb().user.update({ where: { email: "ada@example.com" }, data: { role: "editor", locale: "fr" } });
      // jwt: this read re-issues the cookie (update age 0) with the claims read now.
      expect(await sessionUser(jar)).toMatchObject({ role: "editor", locale: "fr" });
      if (strategy === "jwt") expect(await sessionUser(jar)).toMatchObject({ role: "editor", locale: "fr" });
    });

    it("a large extra claim: the jwt cookie is chunked and read back whole", async () => {
      const note = "n".repeat(6000);
      useExtras(() => ({ note }));
      await createUser("ada@example.com", "Ada");
      const { jar, res } = await signIn(new CookieJar(), "ada@example.com");
      const chunks = res.headers.getSetCookie().filter((c) => /^authjs\.session-token\.\d+=/.test(c) && !/Max-Age=0/.test(c));
      if (strategy === "jwt") expect(chunks.length).toBeGreaterThan(1);
      else expect(chunks).toHaveLength(0);
      expect((await sessionUser(jar))?.note).toBe(note);
      // Through the whole app too: a page's answer, the cookies read back from several chunks.
      const handle = await appHandler();
      const page = await handle(get("/auth/session", { jar }));
      expect(((await page.json()) as { user: { note: string } }).user.note).toBe(note);
    });
  });
}

describe(`without session({ user }) (${dbLabel})`, () => {
  it("the session's user is the layer's alone, and the jwt cookie carries no extra claim", async () => {
    config.session = undefined;
    await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    expect(await sessionUser(jar)).toEqual({ name: "Ada", email: "ada@example.com", image: null });
  });
});
