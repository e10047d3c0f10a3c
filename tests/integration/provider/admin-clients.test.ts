// /admin/oauth-clients (docs/features/provider.md) through React Router's whole pipeline, on both
// databases: an admin with a recent sign-in adds an app (its secret shown once, in the answer) and
// removes it; a plain user gets the unknown-URL page; with the provider off the page does not exist.
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { setRole } from "../../../app/auth/accounts/admin.server.ts";
import { findClientMetadata } from "../../../app/auth/provider/clients.server.ts";
import { appHandler } from "../../support/app-handler.ts";
import { createUser, signIn, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, get, ORIGIN, post } from "../../support/http.ts";

let handle: (request: Request) => Promise<Response>;
let undoEnv: (() => void) | null = null;
beforeAll(async () => {
  handle = await appHandler();
});
beforeEach(async () => {
  await resetDatabase();
  undoEnv = withEnv({ AUTH_PROVIDER: "true", AUTH_URL: ORIGIN });
});
afterEach(() => {
  undoEnv?.();
});

async function send(request: Request, jar: CookieJar): Promise<Response> {
  const res = await handle(request);
  jar.apply(res);
  return res;
}
const csrfIn = (html: string) => /name="csrfToken" value="([0-9a-f|]+)"/.exec(html)![1]!;

describe(`/admin/oauth-clients on ${dbLabel}`, () => {
  it("an admin adds an app (secret shown once) and removes it; both audited", async () => {
    await createUser("admin@example.com", "Admin");
    await setRole("admin@example.com", "admin", { source: "cli" });
    const { jar } = await signIn(new CookieJar(), "admin@example.com");
    const list = await send(get("/admin", { jar }), jar);
    expect(await list.text()).toContain('href="/admin/oauth-clients"');
    const page = await send(get("/admin/oauth-clients", { jar }), jar);
    expect(page.status).toBe(200);
    expect(page.headers.get("Cache-Control")).toContain("no-store");
    const html = await page.text();
    const csrfToken = csrfIn(html);

    const added = await send(
      post("/admin/oauth-clients", { csrfToken, intent: "client-add", name: "Notes", redirectUris: "https://notes.example.com/cb\nhttps://notes.example.com/cb2" }, { jar, headers: { Origin: ORIGIN } }),
      jar,
    );
    expect(added.status).toBe(200);
    const answer = await added.text();
    const clientId = /id="admin-client-id">([^<]+)</.exec(answer)![1]!;
    const secret = /id="admin-client-secret">([^<]+)</.exec(answer)![1]!;
    expect((await findClientMetadata(clientId))?.client_secret).toBe(secret);
    // The next visit lists it without its secret.
    const again = await (await send(get("/admin/oauth-clients", { jar }), jar)).text();
    expect(again).toContain(`data-client-id="${clientId}"`);
    expect(again).not.toContain(secret);

    const bad = await send(post("/admin/oauth-clients", { csrfToken, intent: "client-add", name: "Bad", redirectUris: "http://evil.example/cb" }, { jar, headers: { Origin: ORIGIN } }), jar);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('id="admin-error"');

    const removed = await send(post("/admin/oauth-clients", { csrfToken, intent: "client-remove", clientId }, { jar, headers: { Origin: ORIGIN } }), jar);
    expect(removed.status).toBe(302);
    expect(removed.headers.get("Location")).toBe("/admin/oauth-clients?done=client-removed");
    expect(await testDb().oAuthClient.count()).toBe(0);
    const events = await testDb().authEvent.findMany({ where: { type: { in: ["oauth-client-added", "oauth-client-removed"] } }, orderBy: { at: "asc" } });
    expect(events.map((e) => [e.type, JSON.parse(e.detail!).source])).toEqual([
      ["oauth-client-added", "admin"],
      ["oauth-client-removed", "admin"],
    ]);
  });

  it("a plain user gets the unknown-URL page; with the provider off, so does an admin", async () => {
    await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    expect((await send(get("/admin/oauth-clients", { jar }), jar)).status).toBe(404);
    await createUser("admin@example.com", "Admin");
    await setRole("admin@example.com", "admin", { source: "cli" });
    const admin = (await signIn(new CookieJar(), "admin@example.com")).jar;
    undoEnv?.();
    undoEnv = withEnv({ AUTH_PROVIDER: undefined });
    expect((await send(get("/admin/oauth-clients", { jar: admin }), admin)).status).toBe(404);
    expect(await (await send(get("/admin", { jar: admin }), admin)).text()).not.toContain("/admin/oauth-clients");
  });
});
