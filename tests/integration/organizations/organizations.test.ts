// Organizations and roles (docs/features/organizations.md, ADR 146, 148) through the app's whole
// pipeline: creating one makes its creator the owner; roles decide who changes what; an
// organization always keeps one owner; every change needs a recent sign-in; a user who is not a
// member gets the 404 of an unknown URL for every /orgs/<slug> URL and changes nothing; the active
// organization is in /auth/session for both session strategies and goes at once when the member does.
import { beforeEach, describe, expect, it } from "vitest";
import { deleteAccount } from "../../../app/auth/accounts/deletion.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { requireOrganization } from "../../../app/auth/organizations/index.ts";
import { accountDeletedHooks } from "../../../app/auth/signin/registry.server.ts";
import { ageSession } from "../../support/reauth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, fetchCsrf, get, ORIGIN, post } from "../../support/http.ts";
import { configure } from "../email/helpers.ts";
import { addMember, createOrg, formPost, jsonGet, jsonPost, member, pageGet, send, sessionJson, useApp } from "./helpers.ts";

useApp();

beforeEach(async () => {
  await resetDatabase();
  configure({ AUTH_ORGANIZATIONS: "true" });
});

const audit = (organizationId: string) => testDb().organizationAuditEvent.findMany({ where: { organizationId }, orderBy: { at: "asc" } });
const roleOf = async (organizationId: string, userId: string) => (await testDb().membership.findUnique({ where: { organizationId_userId: { organizationId, userId } } }))?.role ?? null;

/** What a thrown or returned answer of requireOrganization is. */
async function required(jar: CookieJar, options: Parameters<typeof requireOrganization>[1] = {}, headers: Record<string, string> = {}) {
  try {
    return { ok: await requireOrganization(get("/app/projects", { jar, headers }), options) } as const;
  } catch (thrown) {
    if (thrown instanceof Response) return { response: thrown } as const;
    return { data: thrown as { type: string; init: { status: number } } } as const;
  }
}

describe(`organizations (${dbLabel})`, () => {
  it("off (the default): every /orgs URL answers the 404 of an unknown URL, for GET and POST", async () => {
    configure({ AUTH_ORGANIZATIONS: undefined });
    const { jar } = await member("ada@example.com");
    for (const path of ["/orgs", "/orgs/new", "/orgs/acme", "/orgs/acme/audit", "/orgs/invitation?token=x"]) {
      expect((await pageGet(jar, path)).status, path).toBe(404);
    }
    expect((await jsonPost(jar, "/orgs/new", { name: "Acme", slug: "acme" })).status).toBe(404);
    expect((await jsonPost(jar, "/orgs/switch", { slug: "acme" })).status).toBe(404);
    expect(await testDb().organization.count()).toBe(0);
  });

  it("a verified user creates an organization and is its owner; it is listed, active, audited; the page works without JavaScript", async () => {
    const ada = await member("ada@example.com", "Ada");
    const org = await createOrg(ada.jar, "acme", "Acme Inc.");
    expect(await roleOf(org.id, ada.id)).toBe("owner");
    expect((await audit(org.id)).map((e) => [e.type, e.actorId])).toEqual([["organization-created", ada.id]]);

    const list = await jsonGet(ada.jar, "/orgs");
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({ organizations: [{ slug: "acme", name: "Acme Inc.", role: "owner" }], active: "acme" });

    // The page, as a browser without JavaScript gets it: server-rendered forms that post.
    const html = await (await pageGet(ada.jar, "/orgs/acme")).text();
    expect(html).toContain("<h1>Acme Inc.</h1>");
    expect(/<form[^>]*id="org-invite-form"[^>]*>/.exec(html)?.[0]).toMatch(/method="post"/);
    expect(html).toMatch(/<label for="invite-email">/);
    expect(html).toContain('name="intent" value="leave"');

    // In another language: the same page in Arabic, right to left.
    const ar = await (await pageGet(ada.jar, "/orgs/acme", { "Accept-Language": "ar" })).text();
    expect(ar).toMatch(/<html[^>]*lang="ar"[^>]*dir="rtl"/);
    expect(ar).toContain("الأعضاء");
  });

  it("creating needs a verified address, and with AUTH_ORGANIZATIONS_CREATE=admins an administrator", async () => {
    const ada = await member("ada@example.com");
    await testDb().user.update({ where: { id: ada.id }, data: { emailVerified: null } });
    const refused = await jsonPost(ada.jar, "/orgs/new", { name: "Acme", slug: "acme" });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: "Forbidden", message: "Verify your e-mail address before creating an organization." });

    await testDb().user.update({ where: { id: ada.id }, data: { emailVerified: new Date() } });
    configure({ AUTH_ORGANIZATIONS_CREATE: "admins" });
    expect((await jsonPost(ada.jar, "/orgs/new", { name: "Acme", slug: "acme" })).status).toBe(403);
    await testDb().user.update({ where: { id: ada.id }, data: { role: "admin" } });
    expect((await jsonPost(ada.jar, "/orgs/new", { name: "Acme", slug: "acme" })).status).toBe(200);
  });

  it("slugs: malformed and reserved ones are refused (400), a taken one is 409, and nothing is created", async () => {
    const ada = await member("ada@example.com");
    for (const slug of ["A", "-acme", "acme-", "a--b", "new", "switch", "invitation", "x".repeat(41), "acmé"]) {
      const res = await jsonPost(ada.jar, "/orgs/new", { name: "Acme", slug });
      expect(res.status, slug).toBe(400);
      expect((await res.json()).error).toBe("InvalidSlug");
    }
    await createOrg(ada.jar, "acme");
    const bob = await member("bob@example.com");
    const taken = await jsonPost(bob.jar, "/orgs/new", { name: "Other", slug: "acme" });
    expect(taken.status).toBe(409);
    expect(await testDb().organization.count()).toBe(1);
  });

  it("a refused new organization keeps both fields and says what is wrong beside the short name", async () => {
    const ada = await member("ada@example.com");
    await createOrg(ada.jar, "acme");
    const taken = await formPost(ada.jar, "/orgs/new", { name: "Acme Two", slug: "acme" });
    expect(taken.status).toBe(409);
    const html = await taken.text();
    expect(html).toMatch(/<input id="org-name"[^>]*value="Acme Two"/);
    expect(html).toMatch(/<input id="org-slug"[^>]*aria-invalid="true"[^>]*value="acme"/);
    expect(html).toContain('<p class="field-error" id="org-slug-error" role="alert" data-error-for="slug">This short name is taken: choose another.</p>');
    expect(html).not.toContain('id="org-form-error"');
  });

  it("a refused rename is told beside the name field, which keeps what was typed", async () => {
    const ada = await member("ada@example.com");
    await createOrg(ada.jar, "acme", "Acme");
    const refused = await formPost(ada.jar, "/orgs/acme", { intent: "rename", name: "   " });
    expect(refused.status).toBe(400);
    const html = await refused.text();
    expect(html).toMatch(/<p class="field-error" id="org-rename-error" role="alert" data-error-for="name">Enter a name of at most 100 characters.<\/p>/);
    expect(html).not.toContain('id="org-form-error"');
  });

  it("a refused invitation names the address beside the address field and keeps it", async () => {
    const ada = await member("ada@example.com");
    await createOrg(ada.jar, "acme");
    await member("bob@example.com");
    await addMember((await testDb().organization.findFirstOrThrow()).id, (await testDb().user.findFirstOrThrow({ where: { email: "bob@example.com" } })).id);
    const refused = await formPost(ada.jar, "/orgs/acme", { intent: "invite", email: "bob@example.com", role: "member" });
    expect(refused.status).toBe(409);
    const html = await refused.text();
    expect(html).toContain('<p class="field-error" id="invite-email-error" role="alert" data-error-for="email">bob@example.com already belongs to a member.</p>');
    expect(html).toMatch(/<input id="invite-email"[^>]*value="bob@example.com"/);
  });

  it("past the recent sign-in window the page shows one information notice with one button; after a refused change, only the refusal says it", async () => {
    const ada = await member("ada@example.com");
    await createOrg(ada.jar, "acme", "Acme");
    await ageSession(ada.jar, 11);
    const page = await (await pageGet(ada.jar, "/orgs/acme")).text();
    expect(page).toMatch(/<div class="notice info" id="org-reauth-note"><p>Changes to an organization need a recent sign-in.<\/p><p><a class="button inline" href="[^"]+">Sign in again<\/a><\/p><\/div>/);
    expect(page.match(/>Sign in again</g)).toHaveLength(1);
    const refused = await (await formPost(ada.jar, "/orgs/acme", { intent: "rename", name: "Renamed" })).text();
    expect(refused).not.toContain('id="org-reauth-note"');
    expect(refused).toMatch(/<div class="alert" role="alert" id="org-form-error">/);
    expect(refused.match(/>Sign in again</g)).toHaveLength(1);
  });

  it("every change needs a recent sign-in: past it the form answers 403 with the link, a JSON client 403 ReauthRequired, and nothing changes", async () => {
    const ada = await member("ada@example.com");
    const org = await createOrg(ada.jar, "acme", "Acme");
    await ageSession(ada.jar, 11);
    const json = await jsonPost(ada.jar, "/orgs/acme", { intent: "rename", name: "Renamed" });
    expect(json.status).toBe(403);
    expect(await json.json()).toEqual({ error: "ReauthRequired", url: "http://localhost:3000/auth/reauth?callbackUrl=%2Forgs%2Facme" });
    const form = await formPost(ada.jar, "/orgs/acme", { intent: "rename", name: "Renamed" });
    expect(form.status).toBe(403);
    const html = await form.text();
    expect(html).toContain('href="http://localhost:3000/auth/reauth?callbackUrl=%2Forgs%2Facme"');
    expect((await jsonPost(ada.jar, "/orgs/new", { name: "Two", slug: "two" })).status).toBe(403);
    expect((await testDb().organization.findUniqueOrThrow({ where: { id: org.id } })).name).toBe("Acme");
    expect(await testDb().organization.count()).toBe(1);
  });

  it("roles: an owner names admins and owners; an admin manages members and admins but never owners; a member changes nothing", async () => {
    const ada = await member("ada@example.com");
    const org = await createOrg(ada.jar, "acme");
    const bob = await member("bob@example.com");
    const cy = await member("cy@example.com");
    const bobM = await addMember(org.id, bob.id);
    const cyM = await addMember(org.id, cy.id);
    const adaM = await testDb().membership.findUniqueOrThrow({ where: { organizationId_userId: { organizationId: org.id, userId: ada.id } } });

    // A member: 403 for every change, and nothing changes.
    const byMember = await jsonPost(cy.jar, "/orgs/acme", { intent: "role", membershipId: bobM.id, role: "admin" });
    expect(byMember.status).toBe(403);
    expect(await byMember.json()).toMatchObject({ error: "Forbidden" });
    expect((await jsonPost(cy.jar, "/orgs/acme", { intent: "remove", membershipId: bobM.id })).status).toBe(403);

    // The owner makes bob an admin (audited, naming who did it).
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "role", membershipId: bobM.id, role: "admin" })).status).toBe(200);
    expect(await roleOf(org.id, bob.id)).toBe("admin");
    expect((await audit(org.id)).at(-1)).toMatchObject({ type: "member-role-changed", actorId: ada.id });

    // The admin cannot make an owner, nor touch the owner; can manage a member.
    expect((await jsonPost(bob.jar, "/orgs/acme", { intent: "role", membershipId: cyM.id, role: "owner" })).status).toBe(403);
    expect((await jsonPost(bob.jar, "/orgs/acme", { intent: "role", membershipId: adaM.id, role: "member" })).status).toBe(403);
    expect((await jsonPost(bob.jar, "/orgs/acme", { intent: "remove", membershipId: adaM.id })).status).toBe(403);
    expect(await roleOf(org.id, ada.id)).toBe("owner");
    expect((await jsonPost(bob.jar, "/orgs/acme", { intent: "role", membershipId: cyM.id, role: "admin" })).status).toBe(200);
    expect((await jsonPost(bob.jar, "/orgs/acme", { intent: "remove", membershipId: cyM.id })).status).toBe(200);
    expect(await roleOf(org.id, cy.id)).toBeNull();
    // A role that does not exist.
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "role", membershipId: bobM.id, role: "root" })).status).toBe(400);
  });

  it("the last owner cannot step down, leave or be removed (409, form and JSON); with a second owner each works", async () => {
    const ada = await member("ada@example.com");
    const org = await createOrg(ada.jar, "acme");
    const adaM = await testDb().membership.findUniqueOrThrow({ where: { organizationId_userId: { organizationId: org.id, userId: ada.id } } });
    const demote = await jsonPost(ada.jar, "/orgs/acme", { intent: "role", membershipId: adaM.id, role: "admin" });
    expect(demote.status).toBe(409);
    expect(await demote.json()).toEqual({ error: "LastOwner", message: "An organization always keeps one owner: make someone else an owner first." });
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "leave" })).status).toBe(409);
    const form = await formPost(ada.jar, "/orgs/acme", { intent: "leave" });
    expect(form.status).toBe(409);
    expect(await form.text()).toContain("An organization always keeps one owner");
    expect(await roleOf(org.id, ada.id)).toBe("owner");

    const bob = await member("bob@example.com");
    await addMember(org.id, bob.id, "owner");
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "role", membershipId: adaM.id, role: "admin" })).status).toBe(200);
    // Now bob is the last owner: an admin (ada) cannot remove him, and he cannot leave.
    const bobM = await testDb().membership.findUniqueOrThrow({ where: { organizationId_userId: { organizationId: org.id, userId: bob.id } } });
    expect((await jsonPost(bob.jar, "/orgs/acme", { intent: "leave" })).status).toBe(409);
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "remove", membershipId: bobM.id })).status).toBe(403);
    // Ada leaves (as a browser: redirect to the list with its notice).
    const left = await formPost(ada.jar, "/orgs/acme", { intent: "leave" });
    expect(left.status).toBe(302);
    expect(left.headers.get("Location")).toBe("/orgs?done=left");
    expect(await roleOf(org.id, ada.id)).toBeNull();
  });

  it("two owners demoting each other at the same moment: one is refused, one owner is left", async () => {
    const ada = await member("ada@example.com");
    const org = await createOrg(ada.jar, "acme");
    const bob = await member("bob@example.com");
    await addMember(org.id, bob.id, "owner");
    const ms = await testDb().membership.findMany({ where: { organizationId: org.id } });
    const mOf = (id: string) => ms.find((m) => m.userId === id)!.id;
    const [a, b] = await Promise.all([
      jsonPost(ada.jar, "/orgs/acme", { intent: "role", membershipId: mOf(ada.id), role: "member" }),
      jsonPost(bob.jar, "/orgs/acme", { intent: "role", membershipId: mOf(bob.id), role: "member" }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect(await testDb().membership.count({ where: { organizationId: org.id, role: "owner" } })).toBe(1);
  });

  it("rename (owner only) and delete (owner, the short name typed) are audited; delete takes everything with it", async () => {
    const ada = await member("ada@example.com");
    const org = await createOrg(ada.jar, "acme", "Acme");
    const bob = await member("bob@example.com");
    await addMember(org.id, bob.id, "admin");
    expect((await jsonPost(bob.jar, "/orgs/acme", { intent: "rename", name: "Bob's" })).status).toBe(403);
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "rename", name: "  " })).status).toBe(400);
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "rename", name: "Acme Europe" })).status).toBe(200);
    expect((await audit(org.id)).at(-1)).toMatchObject({ type: "organization-renamed", detail: JSON.stringify({ from: "Acme", to: "Acme Europe" }) });

    expect((await jsonPost(bob.jar, "/orgs/acme", { intent: "delete", confirm: "acme" })).status).toBe(403);
    const wrong = await jsonPost(ada.jar, "/orgs/acme", { intent: "delete", confirm: "acm" });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).error).toBe("ConfirmationRequired");
    const deleted = await formPost(ada.jar, "/orgs/acme", { intent: "delete", confirm: "acme" });
    expect(deleted.headers.get("Location")).toBe("/orgs?done=deleted");
    expect(await testDb().organization.count()).toBe(0);
    expect(await testDb().membership.count()).toBe(0);
    expect(await testDb().organizationAuditEvent.count()).toBe(0);
    expect((await pageGet(ada.jar, "/orgs/acme")).status).toBe(404);
  });

  it("isolation: a member of A gets 404 for every URL of B, and A's admin naming B's member, invitation or domain ids gets 404 (never 409) and changes nothing", async () => {
    const ada = await member("ada@example.com");
    const a = await createOrg(ada.jar, "org-a");
    const bea = await member("bea@example.com");
    const b = await createOrg(bea.jar, "org-b");
    const bob = await member("bob@example.com");
    const bobInB = await addMember(b.id, bob.id, "member");
    const invitationInB = await testDb().invitation.create({ data: { organizationId: b.id, email: "x@example.com", role: "member", tokenHash: "h".repeat(64), expires: new Date(Date.now() + 86_400_000) } });
    const domainInB = await testDb().organizationDomain.create({ data: { organizationId: b.id, domain: "b.example", verificationToken: "t" } });
    const before = JSON.stringify([await testDb().membership.findMany({ orderBy: { id: "asc" } }), await testDb().invitation.findMany(), await testDb().organizationDomain.findMany()]);

    // The unknown-URL answer, the same for a slug nobody has.
    const unknown = await pageGet(ada.jar, "/orgs/no-such-org");
    expect(unknown.status).toBe(404);
    // Byte for byte the same page (but for the per-page nonce and the asked path, which the language menu returns to).
    const page = async (res: Response, path: string) => (await res.text()).replaceAll(/nonce="[^"]*"/g, "").replaceAll(path, "/<path>");
    expect(await page(await pageGet(ada.jar, "/orgs/org-b"), "/orgs/org-b")).toBe(await page(unknown, "/orgs/no-such-org"));
    for (const path of ["/orgs/org-b", "/orgs/org-b/audit", "/orgs/org-b/audit?format=csv", "/orgs/org-b/audit?format=json"]) {
      expect((await pageGet(ada.jar, path)).status, path).toBe(404);
      expect((await jsonGet(ada.jar, path)).status, path).toBe(404);
    }
    for (const fields of <Record<string, string>[]>[
      { intent: "rename", name: "Taken over" },
      { intent: "delete", confirm: "org-b" },
      { intent: "role", membershipId: bobInB.id, role: "owner" },
      { intent: "remove", membershipId: bobInB.id },
      { intent: "leave" },
      { intent: "invite", email: "mallory@example.com", role: "owner" },
      { intent: "invitation-revoke", invitationId: invitationInB.id },
      { intent: "invitation-resend", invitationId: invitationInB.id },
      { intent: "domain-add", domain: "evil.example" },
      { intent: "domain-verify", domainId: domainInB.id },
      { intent: "domain-remove", domainId: domainInB.id },
    ]) {
      const res = await jsonPost(ada.jar, "/orgs/org-b", fields);
      expect(res.status, fields.intent).toBe(404);
      expect((await formPost(ada.jar, "/orgs/org-b", fields)).status, fields.intent).toBe(404);
    }
    // A's owner naming B's rows through A's own page: not found in A.
    for (const fields of <Record<string, string>[]>[
      { intent: "role", membershipId: bobInB.id, role: "admin" },
      { intent: "remove", membershipId: bobInB.id },
      { intent: "invitation-revoke", invitationId: invitationInB.id },
      { intent: "invitation-resend", invitationId: invitationInB.id },
      { intent: "domain-verify", domainId: domainInB.id },
      { intent: "domain-remove", domainId: domainInB.id },
    ]) {
      const res = await jsonPost(ada.jar, "/orgs/org-a", fields);
      expect(res.status, fields.intent).toBe(404);
      expect((await res.json()).error).toBe("NotFound");
    }
    // Switching into B is the same 404.
    expect((await jsonPost(ada.jar, "/orgs/switch", { slug: "org-b" })).status).toBe(404);
    const after = JSON.stringify([await testDb().membership.findMany({ orderBy: { id: "asc" } }), await testDb().invitation.findMany(), await testDb().organizationDomain.findMany()]);
    expect(after).toBe(before);
    expect(await testDb().organizationAuditEvent.count({ where: { organizationId: b.id } })).toBe(1);
    expect((await testDb().organization.findUniqueOrThrow({ where: { id: a.id } })).slug).toBe("org-a");
  });

  describe.each(["jwt", "database"] as const)("the active organization, %s sessions", (strategy) => {
    beforeEach(() => configure({ AUTH_SESSION_STRATEGY: strategy }));

    it("/auth/session names it; POST /orgs/switch changes it (form and JSON); another user's organization is 404", async () => {
      const ada = await member("ada@example.com");
      expect((await sessionJson(ada.jar))?.organization).toBeUndefined();
      const acme = await createOrg(ada.jar, "acme");
      expect((await sessionJson(ada.jar))?.organization).toEqual({ id: acme.id, slug: "acme", role: "owner" });
      const globex = await createOrg(ada.jar, "globex");
      expect((await sessionJson(ada.jar))?.organization).toEqual({ id: globex.id, slug: "globex", role: "owner" });

      const form = await formPost(ada.jar, "/orgs/switch", { slug: "acme", callbackUrl: "/app/projects" });
      expect(form.status).toBe(302);
      expect(form.headers.get("Location")).toBe("/app/projects");
      expect((await sessionJson(ada.jar))?.organization?.slug).toBe("acme");
      const cleared = await jsonPost(ada.jar, "/orgs/switch", { slug: "" });
      expect(await cleared.json()).toEqual({ ok: true, organization: null });
      expect((await sessionJson(ada.jar))?.organization).toBeUndefined();

      const bea = await member("bea@example.com");
      await createOrg(bea.jar, "initech");
      expect((await jsonPost(ada.jar, "/orgs/switch", { slug: "initech" })).status).toBe(404);
      expect((await sessionJson(ada.jar))?.organization).toBeUndefined();
    });

    it("a removed member loses the organization on their very next request: /auth/session and requireOrganization", async () => {
      const ada = await member("ada@example.com");
      const org = await createOrg(ada.jar, "acme");
      const bob = await member("bob@example.com");
      const bobM = await addMember(org.id, bob.id, "member");
      expect((await jsonPost(bob.jar, "/orgs/switch", { slug: "acme" })).status).toBe(200);
      expect((await sessionJson(bob.jar))?.organization).toEqual({ id: org.id, slug: "acme", role: "member" });
      const ok = await required(bob.jar);
      expect(ok.ok).toMatchObject({ user: { id: bob.id, email: "bob@example.com" }, organization: { id: org.id, slug: "acme", role: "member" }, membership: { id: bobM.id, role: "member" } });
      expect(ok.ok?.headers).toBeInstanceOf(Headers);

      // A role below the one asked for: 403.
      const low = await required(bob.jar, { role: "admin" }, { Accept: "application/json" });
      expect(low.response?.status).toBe(403);
      expect(await low.response?.json()).toEqual({ error: "Forbidden" });

      // Ada removes Bob; Bob's same cookie no longer carries the organization.
      expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "remove", membershipId: bobM.id })).status).toBe(200);
      expect((await sessionJson(bob.jar))?.organization).toBeUndefined();
      expect((await sessionJson(bob.jar))?.user.email).toBe("bob@example.com");
      const page = await required(bob.jar);
      expect(page.response?.status).toBe(302);
      expect(page.response?.headers.get("Location")).toBe("http://localhost:3000/orgs?callbackUrl=%2Fapp%2Fprojects");
      const json = await required(bob.jar, {}, { Accept: "application/json" });
      expect(json.response?.status).toBe(403);
      expect(await json.response?.json()).toEqual({ error: "OrganizationRequired", url: "http://localhost:3000/orgs?callbackUrl=%2Fapp%2Fprojects" });
      expect((await pageGet(bob.jar, "/orgs/acme")).status).toBe(404);
    });

    it("a member removed while the membership row is deleted behind the app's back (another instance, a script) loses it too", async () => {
      const ada = await member("ada@example.com");
      const org = await createOrg(ada.jar, "acme");
      expect((await sessionJson(ada.jar))?.organization?.slug).toBe("acme");
      await testDb().membership.deleteMany({ where: { organizationId: org.id, userId: ada.id } });
      expect((await sessionJson(ada.jar))?.organization).toBeUndefined();
      expect((await required(ada.jar)).response?.status).toBe(302);
    });
  });

  it("requireOrganization: signed out → the sign-in redirect; organizations off → 404", async () => {
    const signedOut = await required(new CookieJar());
    expect(signedOut.response?.headers.get("Location")).toMatch(/\/auth\/signin\?error=SessionRequired&callbackUrl=%2Fapp%2Fprojects$/);
    const signedOutJson = await required(new CookieJar(), {}, { Accept: "application/json" });
    expect(signedOutJson.response?.status).toBe(401);
    expect(await signedOutJson.response?.json()).toEqual({ error: "SessionRequired", url: "http://localhost:3000/auth/signin?error=SessionRequired&callbackUrl=%2Fapp%2Fprojects" });
    // The /orgs pages answer a signed-out JSON client the same way, GET and POST.
    const page = await jsonGet(undefined, "/orgs");
    expect(page.status).toBe(401);
    expect((await page.json()).error).toBe("SessionRequired");
    const jar = new CookieJar();
    const csrfToken = await fetchCsrf(jar);
    const postRes = await send(post("/orgs/new", { csrfToken, name: "X", slug: "xx" }, { jar, headers: { "X-Auth-Return-Redirect": "1", Origin: ORIGIN } }), jar);
    expect(postRes.status).toBe(401);
    const ada = await member("ada@example.com");
    await createOrg(ada.jar, "acme");
    configure({ AUTH_ORGANIZATIONS: undefined });
    expect((await required(ada.jar)).response?.status).toBe(404);
    expect((await sessionJson(ada.jar))?.organization).toBeUndefined();
  });

  it("form answers: a created organization redirects to its page with a notice; a refused form shows the sentence beside the form", async () => {
    const ada = await member("ada@example.com");
    const created = await formPost(ada.jar, "/orgs/new", { name: "Acme", slug: "acme" });
    expect(created.status).toBe(302);
    expect(created.headers.get("Location")).toBe("/orgs/acme?done=created");
    const page = await (await pageGet(ada.jar, "/orgs/acme?done=created")).text();
    expect(page).toContain("The organization was created. You are its owner.");
    const refused = await formPost(ada.jar, "/orgs/new", { name: "Acme", slug: "acme" });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toMatch(/role="alert"[^>]*>This short name is taken: choose another.<\/p>/);
    // A stale form (no CSRF cookie match): 403, nothing done.
    const stale = await send(new Request("http://localhost:3000/orgs/new", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: ada.jar.header(), Origin: "http://localhost:3000" }, body: "csrfToken=nope&name=X&slug=xx" }));
    expect(stale.status).toBe(403);
    expect(await testDb().organization.count()).toBe(1);
  });

  it("malformed input — wrong types, huge values, odd slugs, other content types — never gives a server error and changes nothing", async () => {
    const ada = await member("ada@example.com");
    const org = await createOrg(ada.jar, "acme", "Acme");
    const before = JSON.stringify([await testDb().organization.findMany(), await testDb().membership.findMany(), await testDb().invitation.count(), await testDb().organizationDomain.count()]);
    const csrfToken = await fetchCsrf(ada.jar);
    const bodies: Record<string, unknown>[] = [
      {},
      { intent: "nope" },
      { intent: ["rename"], name: "x" },
      { intent: "rename", name: { a: 1 } },
      { intent: "rename", name: "\u0000\u202e" },
      { intent: "rename", name: "x".repeat(5_000) },
      { intent: "role", membershipId: { id: 1 }, role: "owner" },
      { intent: "role", membershipId: "x".repeat(500), role: "owner" },
      { intent: "remove", membershipId: "../../etc" },
      { intent: "invite", email: ["a@example.com"], role: null },
      { intent: "invite", email: "a@example.com, b@example.com", role: "member" },
      { intent: "domain-add", domain: "x".repeat(5_000) },
      { intent: "domain-add", domain: "xn--.example" },
      { intent: "domain-verify", domainId: 7 },
      { intent: "delete", confirm: null },
    ];
    for (const body of bodies) {
      const res = await send(post("/orgs/acme", { csrfToken, ...body }, { jar: ada.jar, json: true, headers: { "X-Auth-Return-Redirect": "1", Origin: ORIGIN } }), ada.jar);
      expect([400, 404], JSON.stringify(body).slice(0, 80)).toContain(res.status);
      expect(res.headers.get("Content-Type")).toContain("application/json");
    }
    for (const path of ["/orgs/%00", "/orgs/ACME", "/orgs/a%2Fb", "/orgs/acme%20", `/orgs/${"a".repeat(300)}`, "/orgs/acme/audit?page=-1", "/orgs/acme/audit?page=abc", "/orgs/acme/audit?format=xml"]) {
      const res = await pageGet(ada.jar, path);
      expect(res.status, path).toBeLessThan(500);
    }
    const plain = await send(new Request(`${ORIGIN}/orgs/acme`, { method: "POST", headers: { "Content-Type": "text/plain", Cookie: ada.jar.header(), Origin: ORIGIN }, body: "intent=leave" }));
    expect(plain.status).toBeLessThan(500);
    expect((await jsonPost(ada.jar, "/orgs/invitation", { token: "x".repeat(10_000) })).status).toBe(404);
    expect((await jsonPost(ada.jar, "/orgs/switch", { slug: "../acme" })).status).toBe(404);
    const after = JSON.stringify([await testDb().organization.findMany(), await testDb().membership.findMany(), await testDb().invitation.count(), await testDb().organizationDomain.count()]);
    expect(after).toBe(before);
    expect(org.slug).toBe("acme");
  });

  it("an organization's only owner cannot delete their account (409 LastOwner); once another owner is named, they can, and the organization stays", async () => {
    const ada = await member("ada@example.com");
    const org = await createOrg(ada.jar, "acme");
    const refused = await jsonPost(ada.jar, "/account", { intent: "account-delete", confirm: "DELETE" });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual({ error: "LastOwner", message: "You are the only owner of an organization: make someone else an owner there, or delete the organization, before deleting your account." });
    expect(await testDb().user.count({ where: { id: ada.id } })).toBe(1);
    // An operator (the console, user:delete) is refused the same way while she is the only owner.
    const byOperator = () => deleteAccount(ada.id, { source: "cli" }, { hooks: accountDeletedHooks, ar: authRequest(get("/")) });
    expect(await byOperator()).toEqual({ ok: false, reason: "last-owner" });
    const bob = await member("bob@example.com");
    await addMember(org.id, bob.id, "owner");
    expect((await jsonPost(ada.jar, "/account", { intent: "account-delete", confirm: "DELETE" })).status).toBe(200);
    expect(await testDb().user.count({ where: { id: ada.id } })).toBe(0);
    expect(await testDb().membership.findMany({ where: { organizationId: org.id }, select: { userId: true, role: true } })).toEqual([{ userId: bob.id, role: "owner" }]);
  });
});
