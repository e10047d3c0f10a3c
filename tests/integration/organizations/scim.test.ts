// SCIM 2.0 provisioning (docs/features/scim.md, ADR 156-158) through the app's whole pipeline:
// tokens made only by owners and admins after a recent sign-in, shown once and kept hashed; Okta's
// specification and CRUD test sequences and Entra ID's request shapes replayed from the committed
// fixtures in tests/fixtures/scim; one organization's token never reads or changes another's
// people or groups (404, never 409); a request is atomic; deprovisioning ends every session of the
// person in both session strategies and refuses their sign-in.
import { readFileSync } from "node:fs";
import { beforeEach, describe, expect, it } from "vitest";
import { createUser, signIn } from "../../support/auth.ts";
import { runInProcess } from "../../support/cli.ts";
import { ageSession } from "../../support/reauth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, ORIGIN } from "../../support/http.ts";
import { configure } from "../email/helpers.ts";
import { addMember, createOrg, formPost, jsonGet, jsonPost, member, send, sessionJson, useApp } from "./helpers.ts";

useApp();

beforeEach(async () => {
  await resetDatabase();
  configure({ AUTH_ORGANIZATIONS: "true" });
});

async function verifyDomain(organizationId: string, domain: string) {
  await testDb().organizationDomain.create({ data: { organizationId, domain, verificationToken: "t", state: "verified", verifiedDomain: domain, verifiedAt: new Date() } });
}

/** An organization with a verified domain, its owner signed in, and a SCIM token minted through the page's JSON answer. */
async function provisionedOrg(slug: string, domain: string) {
  const owner = await member(`owner@${slug}-owner.example`);
  const org = await createOrg(owner.jar, slug);
  await verifyDomain(org.id, domain);
  const res = await jsonPost(owner.jar, `/orgs/${slug}`, { intent: "scim-token-create", name: "Directory" });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { ok: true; token: { id: string; secret: string } };
  return { owner, org, domain, token: body.token.secret, tokenId: body.token.id };
}

type Scim = { status: number; json: Record<string, unknown> | null; headers: Headers };
async function scim(token: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Scim> {
  const init: RequestInit = { method, headers: { Accept: "application/scim+json", ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { "Content-Type": "application/scim+json" }), ...headers } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await send(new Request(`${ORIGIN}/scim/v2${path}`, init));
  const text = await res.text();
  const json = text && res.headers.get("Content-Type")?.includes("json") ? (JSON.parse(text) as Record<string, unknown>) : null;
  return { status: res.status, json, headers: res.headers };
}

// ---------------------------------------------------------------------------------------------
// The fixture replayer

type Step = { note: string; method: string; path: string; body?: unknown; expect: { status: number; json?: Record<string, unknown> }; capture?: Record<string, string>; then?: string };
type Fixture = { headers: Record<string, string>; steps: Step[] };
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../fixtures/scim/${name}`, import.meta.url), "utf8")) as Fixture;

function substitute(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === "string") return value.replace(/\{\{(\w+)\}\}/g, (_, name: string) => (name === "DOMAIN" ? vars.domain!.toUpperCase() : (vars[name] ?? `{{${name}}}`)));
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  return value;
}

/** The value at a dotted path; the enterprise extension's URN is one key. */
function at(json: unknown, path: string): unknown {
  const urn = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
  const parts = path.startsWith(urn) ? [urn, ...path.slice(urn.length + 1).split(".")] : path.split(".");
  return parts.reduce<unknown>((node, key) => (node && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined), json);
}

async function replay(name: string, token: string, vars: Record<string, string>, then: (event: string, vars: Record<string, string>) => Promise<void> = async () => {}) {
  const { headers, steps } = fixture(name);
  for (const step of steps) {
    const path = substitute(step.path, vars) as string;
    const body = step.body === undefined ? undefined : substitute(step.body, vars);
    const res = await scim(token, step.method, path, body, headers);
    expect(res.status, `${step.note}: ${JSON.stringify(res.json)}`).toBe(step.expect.status);
    for (const [property, expected] of Object.entries(step.expect.json ?? {})) {
      const actual = at(res.json, property);
      const want = substitute(expected, vars);
      const label = `${step.note}: ${property} in ${JSON.stringify(res.json)}`;
      if (want && typeof want === "object" && !Array.isArray(want) && "$notEmpty" in want) expect(actual === undefined || actual === null || actual === "" || (Array.isArray(actual) && actual.length === 0), label).toBe(false);
      else if (want && typeof want === "object" && !Array.isArray(want) && "$number" in want) expect(typeof actual, label).toBe("number");
      else if (want && typeof want === "object" && !Array.isArray(want) && "$has" in want) expect(actual, label).toContain((want as { $has: unknown }).$has);
      else if (want && typeof want === "object" && !Array.isArray(want) && "$absent" in want) expect(actual, label).toBeUndefined();
      else expect(actual, label).toEqual(want);
    }
    for (const [variable, property] of Object.entries(step.capture ?? {})) vars[variable] = String(at(res.json, property));
    if (step.then) await then(step.then, vars);
  }
}

const membership = (organizationId: string, email: string) => testDb().membership.findFirst({ where: { organizationId, user: { email } } });
const account = (email: string) => testDb().user.findUnique({ where: { email } });

describe(`SCIM provisioning (${dbLabel})`, () => {
  describe("tokens", () => {
    it("an owner and an admin mint one after a recent sign-in; a member never does; it is shown once, kept hashed, listed with its last use, revocable; each change is audited", async () => {
      const { owner, org, token, tokenId } = await provisionedOrg("acme", "acme-corp.com");
      expect(token).toMatch(/^vscim_[A-Za-z0-9_-]{43}$/);
      const row = await testDb().scimToken.findUniqueOrThrow({ where: { id: tokenId } });
      expect(row.tokenHash).not.toContain(token);
      expect(JSON.stringify(await testDb().scimToken.findMany())).not.toContain(token.slice(6));

      const admin = await member("admin@acme-staff.example");
      await addMember(org.id, admin.id, "admin");
      expect((await jsonPost(admin.jar, "/orgs/acme", { intent: "scim-token-create", name: "Entra" })).status).toBe(200);

      const plain = await member("plain@acme-staff.example");
      await addMember(org.id, plain.id, "member");
      const refused = await jsonPost(plain.jar, "/orgs/acme", { intent: "scim-token-create", name: "Mine" });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ error: "Forbidden" });
      expect(await testDb().scimToken.count({ where: { organizationId: org.id } })).toBe(2);
      // A member's page shows no provisioning section at all.
      expect(((await (await jsonGet(plain.jar, "/orgs/acme")).json()) as { scim: unknown }).scim).toBeNull();

      // A stale sign-in: nothing is made.
      await ageSession(owner.jar, 11);
      const stale = await jsonPost(owner.jar, "/orgs/acme", { intent: "scim-token-create", name: "Late" });
      expect(stale.status).toBe(403);
      expect(await testDb().scimToken.count({ where: { organizationId: org.id } })).toBe(2);
      await ageSession(owner.jar, 0);

      // Listed with its last use once it was used; the secret is never in the page's data.
      expect((await scim(token, "GET", "/Users")).status).toBe(200);
      const page = (await (await jsonGet(owner.jar, "/orgs/acme")).json()) as { scim: { url: string; tokens: { id: string; name: string; lastUsedAt: string | null }[] } };
      expect(page.scim.url).toBe(`${ORIGIN}/scim/v2`);
      expect(page.scim.tokens.find((t) => t.id === tokenId)?.lastUsedAt).not.toBeNull();
      expect(JSON.stringify(page)).not.toContain(token);

      // Revoked: the next request is 401.
      expect((await jsonPost(owner.jar, "/orgs/acme", { intent: "scim-token-revoke", tokenId })).status).toBe(200);
      const after = await scim(token, "GET", "/Users");
      expect(after.status).toBe(401);
      expect(after.headers.get("WWW-Authenticate")).toContain("Bearer");
      const types = (await testDb().organizationAuditEvent.findMany({ where: { organizationId: org.id }, orderBy: { at: "asc" } })).map((e) => e.type);
      expect(types.filter((t) => t.startsWith("scim-token"))).toEqual(["scim-token-created", "scim-token-created", "scim-token-revoked"]);
    });

    it("a form post (no JavaScript) shows the new token once in the page; a non-member's post is 404", async () => {
      const { owner } = await provisionedOrg("acme", "acme-corp.com");
      const res = await formPost(owner.jar, "/orgs/acme", { intent: "scim-token-create", name: "Okta" });
      expect(res.status).toBe(200);
      const html = await res.text();
      const secret = /vscim_[A-Za-z0-9_-]{43}/.exec(html)?.[0];
      expect(secret).toBeDefined();
      expect((await scim(secret!, "GET", "/ServiceProviderConfig")).status).toBe(200);
      const again = await (await send(new Request(`${ORIGIN}/orgs/acme`, { headers: { Accept: "text/html", Cookie: owner.jar.header() } }))).text();
      expect(again).not.toContain(secret!);

      const outsider = await member("out@elsewhere.example");
      expect((await jsonPost(outsider.jar, "/orgs/acme", { intent: "scim-token-create", name: "X" })).status).toBe(404);
    });

    it("no token, a malformed one, or organizations off: 401, 401, 404", async () => {
      await provisionedOrg("acme", "acme-corp.com");
      expect((await scim(null, "GET", "/Users")).status).toBe(401);
      expect((await scim("vscim_notatokenatallbutlongenough", "GET", "/Users")).status).toBe(401);
      configure({ AUTH_ORGANIZATIONS: undefined });
      expect((await scim(null, "GET", "/Users")).status).toBe(404);
    });
  });

  it("discovery: ServiceProviderConfig, ResourceTypes and Schemas", async () => {
    const { token } = await provisionedOrg("acme", "acme-corp.com");
    const config = await scim(token, "GET", "/ServiceProviderConfig");
    expect(config.headers.get("Content-Type")).toContain("application/scim+json");
    expect(config.json).toMatchObject({ patch: { supported: true }, filter: { supported: true, maxResults: 200 }, bulk: { supported: false } });
    const types = await scim(token, "GET", "/ResourceTypes");
    expect((types.json!.Resources as { id: string }[]).map((r) => r.id).sort()).toEqual(["Group", "User"]);
    expect((await scim(token, "GET", "/ResourceTypes/User")).json).toMatchObject({ id: "User", endpoint: "/Users" });
    const schemas = await scim(token, "GET", "/Schemas");
    expect((schemas.json!.Resources as { id: string }[]).map((r) => r.id)).toEqual(expect.arrayContaining(["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:core:2.0:Group"]));
    expect((await scim(token, "GET", "/Schemas/urn:nope")).status).toBe(404);
    expect((await scim(token, "GET", "/Nothing")).status).toBe(404);
  });

  it("Okta's SCIM 2.0 specification test sequence passes", async () => {
    const { token, org, domain } = await provisionedOrg("acme", "acme-corp.com");
    await replay("okta-spec-test.json", token, { domain });
    expect(await membership(org.id, `random.okta@${domain}`)).toMatchObject({ role: "member" });
  });

  it("Okta's CRUD test sequence: deactivation removes the member and disables the person; reactivation restores both", async () => {
    const { token, org, domain } = await provisionedOrg("acme", "acme-corp.com");
    const email = `crud.person@${domain}`;
    await replay("okta-crud-test.json", token, { domain }, async (event) => {
      if (event === "deactivated") {
        expect(await membership(org.id, email)).toBeNull();
        expect((await account(email))?.disabledAt).not.toBeNull();
      }
      if (event === "reactivated") {
        expect(await membership(org.id, email)).toMatchObject({ role: "member" });
        expect((await account(email))?.disabledAt).toBeNull();
      }
    });
  });

  it("an account a site administrator disabled stays disabled: SCIM active false then true leaves it disabled and answers active false (ADR 175)", async () => {
    const { token, org, domain } = await provisionedOrg("acme", "acme-corp.com");
    const email = `dana@${domain}`;
    const created = await scim(token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: email, emails: [{ value: email, primary: true }], active: true });
    expect(created.status).toBe(201);
    const id = String(created.json!.id);
    expect((await runInProcess("scripts/user-disable.ts", ["--email", email])).code).toBe(0);
    expect(await account(email)).toMatchObject({ disabledBy: "admin" });
    const patch = (value: boolean) => scim(token, "PATCH", `/Users/${id}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "active", value }] });
    expect((await patch(false)).status).toBe(200);
    const again = await patch(true);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ active: false });
    expect((await account(email))?.disabledAt).not.toBeNull();
    expect(await membership(org.id, email)).toBeNull();
    expect((await scim(token, "GET", `/Users/${id}`)).json).toMatchObject({ active: false });
    // The operator enables it; the directory's next reactivation then works as usual.
    expect((await runInProcess("scripts/user-enable.ts", ["--email", email])).code).toBe(0);
    expect(await account(email)).toMatchObject({ disabledAt: null, disabledBy: null });
    expect((await patch(true)).json).toMatchObject({ active: true });
    expect(await membership(org.id, email)).toMatchObject({ role: "member" });
  });

  it("one organization's directory never re-enables an account another organization's directory disabled", async () => {
    const a = await provisionedOrg("acme", "acme-corp.com");
    const b = await provisionedOrg("beta", "beta-corp.com");
    // Erin's address is on B's domain now; A's directory disabled the account earlier (when A held it).
    const email = `erin@${b.domain}`;
    const created = await scim(b.token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: email, active: false });
    expect(created.status).toBe(201);
    await testDb().user.update({ where: { email }, data: { disabledAt: new Date(), disabledBy: `scim:${a.org.id}` } });
    const patch = (value: boolean) => scim(b.token, "PATCH", `/Users/${String(created.json!.id)}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "active", value }] });
    expect((await patch(true)).json).toMatchObject({ active: false });
    expect((await account(email))?.disabledAt).not.toBeNull();
    // What B's own directory disabled, it enables.
    await testDb().user.update({ where: { email }, data: { disabledBy: `scim:${b.org.id}` } });
    expect((await patch(true)).json).toMatchObject({ active: true });
    expect(await account(email)).toMatchObject({ disabledAt: null, disabledBy: null });
  });

  describe("every address, and the target's current one (ADR 174)", () => {
    const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
    it("an emails entry outside the organization's verified domains is refused with 400 invalidValue and nothing is stored, on create, PUT and PATCH", async () => {
      const { token } = await provisionedOrg("acme", "acme-corp.com");
      await provisionedOrg("beta", "beta-corp.com");
      const refused = await scim(token, "POST", "/Users", { schemas: [USER], userName: "x1@acme-corp.com", emails: [{ value: "bob@beta-corp.com", primary: true }] });
      expect(refused.status).toBe(400);
      expect(refused.json).toMatchObject({ scimType: "invalidValue" });
      expect(await testDb().scimUser.count()).toBe(0);
      expect(await testDb().user.count({ where: { email: { in: ["x1@acme-corp.com", "bob@beta-corp.com"] } } })).toBe(0);
      const created = await scim(token, "POST", "/Users", { schemas: [USER], userName: "x1@acme-corp.com", emails: [{ value: "x1@acme-corp.com", primary: true }] });
      expect(created.status).toBe(201);
      const id = String(created.json!.id);
      const put = await scim(token, "PUT", `/Users/${id}`, { schemas: [USER], userName: "x1@acme-corp.com", emails: [{ value: "x1@acme-corp.com", primary: true }, { value: "x1@beta-corp.com" }] });
      expect(put.status).toBe(400);
      const patched = await scim(token, "PATCH", `/Users/${id}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "add", path: "emails", value: [{ value: "bob@beta-corp.com", type: "home" }] }] });
      expect(patched.status).toBe(400);
      expect(JSON.stringify((await scim(token, "GET", `/Users/${id}`)).json)).not.toContain("beta-corp.com");
    });

    it("an organization that lost the domain no longer disables, rewrites or deletes the accounts on it: 404", async () => {
      const { token, org, domain } = await provisionedOrg("acme", "acme-corp.com");
      const email = `fay@${domain}`;
      const created = await scim(token, "POST", "/Users", { schemas: [USER], userName: email });
      const id = String(created.json!.id);
      // The domain goes to another organization.
      await testDb().organizationDomain.deleteMany({ where: { organizationId: org.id } });
      await provisionedOrg("other", domain);
      expect((await scim(token, "PATCH", `/Users/${id}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "active", value: false }] })).status).toBe(404);
      expect((await scim(token, "PUT", `/Users/${id}`, { schemas: [USER], userName: email, active: false })).status).toBe(404);
      expect((await scim(token, "DELETE", `/Users/${id}`)).status).toBe(404);
      expect((await account(email))?.disabledAt).toBeNull();
      expect(await testDb().scimUser.count({ where: { id } })).toBe(1);
    });
  });

  it("an existing account whose address was never verified is taken over clean: its password, sessions and second factor go; a verified one is linked as before (ADR 174)", async () => {
    const { token, org, domain } = await provisionedOrg("acme", "acme-corp.com");
    const email = `gus@${domain}`;
    // A squatter signed up with the address before the organization's person arrived (never verified).
    const squatter = await createUser(email);
    expect((await account(email))?.emailVerified).toBeNull();
    const { jar } = await signIn(new CookieJar(), email);
    expect((await sessionJson(jar))?.user.email).toBe(email);
    await testDb().recoveryCode.create({ data: { userId: squatter.id, hash: "x" } });
    const created = await scim(token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: email });
    expect(created.status).toBe(201);
    expect(await membership(org.id, email)).toMatchObject({ role: "member" });
    expect(await testDb().password.count({ where: { userId: squatter.id } })).toBe(0);
    expect(await testDb().recoveryCode.count({ where: { userId: squatter.id } })).toBe(0);
    expect(await sessionJson(jar)).toBeNull();
    expect((await signIn(new CookieJar(), email)).res.headers.getSetCookie().some((c) => /session-token=[^;]/.test(c))).toBe(false);
    const event = await testDb().organizationAuditEvent.findFirstOrThrow({ where: { organizationId: org.id, type: "scim-user-created" } });
    expect(JSON.parse(event.detail!)).toMatchObject({ takenOver: "unverified-account" });

    // A verified account keeps its password: linked, as before.
    const verified = await member(`hal@${domain}`);
    expect((await scim(token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: `hal@${domain}` })).status).toBe(201);
    expect(await testDb().password.count({ where: { userId: verified.id } })).toBe(1);
    expect((await sessionJson(verified.jar))?.user.email).toBe(`hal@${domain}`);
  });

  it("Entra ID's request shapes: capitalised ops, \"False\" strings, filtered paths on absent arrays, member removal by value; the Admins group makes an admin", async () => {
    const { token, org, domain } = await provisionedOrg("acme", "acme-corp.com");
    const email = `test_user_dfeef4c5@${domain}`;
    await replay("entra-shapes.json", token, { domain }, async (event) => {
      const m = await membership(org.id, email);
      if (event === "admin") expect(m?.role).toBe("admin");
      if (event === "member") expect(m?.role).toBe("member");
      if (event === "deactivated") {
        expect(m).toBeNull();
        expect((await account(email))?.disabledAt).not.toBeNull();
      }
      if (event === "reactivated") expect((await account(email))?.disabledAt).toBeNull();
      if (event === "deleted") {
        expect(m).toBeNull();
        expect((await account(email))?.disabledAt).not.toBeNull();
      }
    });
    const events = (await testDb().organizationAuditEvent.findMany({ where: { organizationId: org.id } })).map((e) => e.type);
    expect(events).toEqual(expect.arrayContaining(["scim-user-created", "scim-user-updated", "scim-user-deactivated", "scim-user-reactivated", "scim-user-deleted", "scim-group-created", "scim-group-updated"]));
  });

  it("only addresses in the organization's verified domains are managed", async () => {
    const { token } = await provisionedOrg("acme", "acme-corp.com");
    const res = await scim(token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "someone@gmail.com" });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ scimType: "invalidValue" });
    expect((await scim(token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "not an address" })).status).toBe(400);
    expect(await testDb().scimUser.count()).toBe(0);
  });

  it("a request is atomic: one bad operation changes nothing", async () => {
    const { token, domain } = await provisionedOrg("acme", "acme-corp.com");
    const created = await scim(token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: `ann@${domain}`, displayName: "Ann" });
    const id = created.json!.id as string;
    const before = await testDb().scimUser.findUniqueOrThrow({ where: { id } });
    const res = await scim(token, "PATCH", `/Users/${id}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [
        { op: "replace", path: "displayName", value: "Changed" },
        { op: "replace", path: "active", value: false },
        { op: "frobnicate", path: "title", value: "x" },
      ],
    });
    expect(res.status).toBe(400);
    expect(await testDb().scimUser.findUniqueOrThrow({ where: { id } })).toEqual(before);
    expect((await account(`ann@${domain}`))?.disabledAt).toBeNull();
    // A group naming one unknown member among known ones is refused whole.
    const group = await scim(token, "POST", "/Groups", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "Admins", members: [{ value: id }, { value: "unknown" }] });
    expect(group.status).toBe(400);
    expect(await testDb().scimGroup.count()).toBe(0);
  });

  it("two creates of one userName at once: one 201, one 409, never a 500", async () => {
    const { token, domain } = await provisionedOrg("acme", "acme-corp.com");
    const body = { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: `twice@${domain}` };
    const answers = await Promise.all([scim(token, "POST", "/Users", body), scim(token, "POST", "/Users", body)]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    expect(await testDb().scimUser.count()).toBe(1);
    expect(await testDb().user.count({ where: { email: `twice@${domain}` } })).toBe(1);
  });

  it("lists page in the database: startIndex and count", async () => {
    const { token, domain } = await provisionedOrg("acme", "acme-corp.com");
    for (const name of ["a", "b", "c"]) expect((await scim(token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: `${name}@${domain}` })).status).toBe(201);
    const page = await scim(token, "GET", "/Users?startIndex=2&count=1");
    expect(page.json).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1, Resources: [{ userName: `b@${domain}` }] });
    const filtered = await scim(token, "GET", `/Users?filter=${encodeURIComponent(`userName sw "c@"`)}`);
    expect(filtered.json).toMatchObject({ totalResults: 1, Resources: [{ userName: `c@${domain}` }] });
    expect((await scim(token, "GET", `/Users?filter=${encodeURIComponent("userName eq \"x\" and ((")}`)).json).toMatchObject({ status: "400", scimType: "invalidFilter" });
  });

  it("the organization's last owner is never deprovisioned", async () => {
    const { token, owner, org } = await provisionedOrg("acme", "acme-corp.com");
    // The owner's own address in the verified domain, provisioned by the directory.
    await testDb().user.update({ where: { id: owner.id }, data: { email: "boss@acme-corp.com" } });
    const created = await scim(token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "boss@acme-corp.com" });
    expect(created.status).toBe(201);
    const id = created.json!.id as string;
    const res = await scim(token, "PATCH", `/Users/${id}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "active", value: false }] });
    expect(res.status).toBe(400);
    expect(await membership(org.id, "boss@acme-corp.com")).toMatchObject({ role: "owner" });
    expect((await account("boss@acme-corp.com"))?.disabledAt).toBeNull();
    expect((await scim(token, "GET", `/Users/${id}`)).json).toMatchObject({ active: true });
  });

  describe("isolation", () => {
    it("organization B's token never reads or changes organization A's users or groups: 404, never 409", async () => {
      const a = await provisionedOrg("acme", "acme-corp.com");
      const b = await provisionedOrg("globex", "globex-corp.com");
      const ann = await scim(a.token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "ann@acme-corp.com", externalId: "ext-ann" });
      const annId = ann.json!.id as string;
      const group = await scim(a.token, "POST", "/Groups", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "Admins", members: [{ value: annId }] });
      const groupId = group.json!.id as string;
      const snapshot = async () => JSON.stringify([await testDb().scimUser.findMany({ orderBy: { id: "asc" } }), await testDb().scimGroup.findMany({ orderBy: { id: "asc" } }), await testDb().scimGroupMember.findMany(), await testDb().membership.findMany({ orderBy: { id: "asc" } }), await testDb().user.findMany({ orderBy: { id: "asc" }, select: { id: true, email: true, disabledAt: true } })]);
      const before = await snapshot();

      const patch = { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "active", value: false }] };
      for (const [method, path, body] of [
        ["GET", `/Users/${annId}`],
        ["PUT", `/Users/${annId}`, { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "ann@acme-corp.com", active: false }],
        ["PATCH", `/Users/${annId}`, patch],
        ["DELETE", `/Users/${annId}`],
        ["GET", `/Groups/${groupId}`],
        ["PUT", `/Groups/${groupId}`, { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "Admins", members: [] }],
        ["PATCH", `/Groups/${groupId}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "remove", path: "members" }] }],
        ["DELETE", `/Groups/${groupId}`],
      ] as const) {
        const res = await scim(b.token, method, path, body);
        expect(res.status, `${method} ${path}`).toBe(404);
      }
      // Lists and filters see only B's own people.
      expect((await scim(b.token, "GET", `/Users?filter=${encodeURIComponent('userName eq "ann@acme-corp.com"')}`)).json).toMatchObject({ totalResults: 0 });
      expect((await scim(b.token, "GET", `/Users?filter=${encodeURIComponent('externalId eq "ext-ann"')}`)).json).toMatchObject({ totalResults: 0 });
      expect((await scim(b.token, "GET", "/Users")).json).toMatchObject({ totalResults: 0 });
      expect((await scim(b.token, "GET", "/Groups")).json).toMatchObject({ totalResults: 0 });
      // Creating A's person with B's token: the answer is the one for any address outside B's domains, never a 409.
      const taken = await scim(b.token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "ann@acme-corp.com" });
      const nobody = await scim(b.token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "nobody@acme-corp.com" });
      expect(taken.status).toBe(400);
      expect(taken.json).toEqual(nobody.json);
      // B's group naming A's person: refused as an unknown member.
      const stolen = await scim(b.token, "POST", "/Groups", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "Admins", members: [{ value: annId }] });
      expect(stolen.status).toBe(400);
      expect(await snapshot()).toBe(before);
    });

    it("the same userName provisioned by two organizations is no conflict for either", async () => {
      const a = await provisionedOrg("acme", "acme-corp.com");
      const b = await provisionedOrg("globex", "globex-corp.com");
      // A person whose userName is not their address: the address decides the domain, the userName is unique per organization only.
      const inA = await scim(a.token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "jdoe", emails: [{ value: "jdoe@acme-corp.com", primary: true }] });
      const inB = await scim(b.token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "jdoe", emails: [{ value: "jdoe@globex-corp.com", primary: true }] });
      expect([inA.status, inB.status]).toEqual([201, 201]);
      expect((await scim(a.token, "GET", `/Users?filter=${encodeURIComponent('userName eq "jdoe"')}`)).json).toMatchObject({ totalResults: 1, Resources: [{ id: inA.json!.id }] });
    });
  });

  describe.each(["jwt", "database"] as const)("deprovisioning, %s sessions", (strategy) => {
    beforeEach(() => configure({ AUTH_SESSION_STRATEGY: strategy }));

    for (const how of ["active=false", "DELETE"] as const) {
      it(`${how}: the person's sessions end at once, sign-in is refused, and the organization is gone`, async () => {
        const { token, org } = await provisionedOrg("acme", "acme-corp.com");
        const person = await member("leaver@acme-corp.com");
        const created = await scim(token, "POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "leaver@acme-corp.com", name: { givenName: "Lee", familyName: "Ver" } });
        expect(created.status).toBe(201);
        const id = created.json!.id as string;
        expect(await membership(org.id, "leaver@acme-corp.com")).toMatchObject({ userId: person.id, role: "member" });
        expect((await jsonPost(person.jar, "/orgs/switch", { slug: "acme" })).status).toBe(200);
        expect((await sessionJson(person.jar))?.organization?.slug).toBe("acme");
        const second = (await signIn(new CookieJar(), "leaver@acme-corp.com")).jar;
        expect((await sessionJson(second))?.user.email).toBe("leaver@acme-corp.com");

        const res = how === "DELETE" ? await scim(token, "DELETE", `/Users/${id}`) : await scim(token, "PATCH", `/Users/${id}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "Replace", path: "active", value: "False" }] });
        expect(res.status).toBe(how === "DELETE" ? 204 : 200);

        expect(await sessionJson(person.jar)).toBeNull();
        expect(await sessionJson(second)).toBeNull();
        expect(await membership(org.id, "leaver@acme-corp.com")).toBeNull();
        const again = await signIn(new CookieJar(), "leaver@acme-corp.com");
        expect(await sessionJson(again.jar)).toBeNull();
        // The account's own log names the directory that disabled it.
        const disabled = await testDb().authEvent.findFirstOrThrow({ where: { userId: person.id, type: "user-disabled" } });
        expect(JSON.parse(disabled.detail ?? "{}")).toMatchObject({ source: "scim", organizationId: org.id });
      });
    }
  });
});
