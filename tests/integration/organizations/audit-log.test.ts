// The organization's audit log (docs/features/organizations.md, ADR 150): a paged page for admins
// and owners, and downloads of all of it as JSON and CSV; a cell a spreadsheet would run as a
// formula is neutralised; a member who is not an admin gets 403, a non-member the 404.
import { beforeEach, describe, expect, it } from "vitest";
import { AUDIT_PAGE_SIZE } from "../../../app/auth/organizations/audit.server.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { configure } from "../email/helpers.ts";
import { createOrg, jsonGet, jsonPost, member, pageGet, useApp } from "./helpers.ts";

useApp();
beforeEach(async () => {
  await resetDatabase();
  configure({ AUTH_ORGANIZATIONS: "true" });
});

describe(`the organization audit log (${dbLabel})`, () => {
  it("shows every change with who made it, paged; downloads as JSON and as CSV safe to open in a spreadsheet", async () => {
    const ada = await member("ada@example.com");
    const org = await createOrg(ada.jar, "acme", "Acme");
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "rename", name: "=HYPERLINK(\"http://evil.example\",\"x\")" })).status).toBe(200);
    // An event whose actor address begins with a formula character, as the CSV must neutralise it.
    await testDb().organizationAuditEvent.create({ data: { organizationId: org.id, actorId: ada.id, actorEmail: "+cmd@example.com", type: "member-added", detail: JSON.stringify({ userId: "u" }) } });

    const page = await jsonGet(ada.jar, "/orgs/acme/audit");
    expect(page.status).toBe(200);
    const body = await page.json();
    expect(body.events.map((e: { type: string }) => e.type)).toEqual(["member-added", "organization-renamed", "organization-created"]);
    expect(body.events[1]).toMatchObject({ actorId: ada.id, actorEmail: "ada@example.com" });
    const html = await (await pageGet(ada.jar, "/orgs/acme/audit")).text();
    expect(html).toContain("Organization renamed");
    expect(html).toContain('href="/orgs/acme/audit?format=csv"');

    const json = await pageGet(ada.jar, "/orgs/acme/audit?format=json");
    expect(json.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect(json.headers.get("Content-Disposition")).toBe('attachment; filename="acme-audit.json"');
    expect(json.headers.get("Cache-Control")).toBe("private, no-store");
    const download = await json.json();
    expect(download.organization).toEqual({ id: org.id, slug: "acme" });
    expect(download.events).toHaveLength(3);

    const csv = await pageGet(ada.jar, "/orgs/acme/audit?format=csv");
    expect(csv.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    const lines = (await csv.text()).split("\r\n");
    expect(lines[0]).toBe("at,type,actorId,actorEmail,ip,detail");
    expect(lines[1]).toContain(",'+cmd@example.com,");
    // The renamed name is inside the detail cell's JSON, which begins with "{": quoted as CSV, never a formula.
    expect(lines[2]).toMatch(/,"\{""from"":""Acme"",""to"":""=HYPERLINK\(\\""http:\/\/evil\.example\\"",\\""x\\""\)""\}"$/);
    for (const line of lines.slice(1).filter(Boolean)) for (const cell of line.split(",")) expect(cell).not.toMatch(/^[=+\-@]/);
  });

  it("the page says each event's details in words in the reader's language, never the stored JSON or ids; the downloads keep the stored detail", async () => {
    const ada = await member("ada@example.com");
    const org = await createOrg(ada.jar, "acme", "Acme");
    const bob = await member("bob@example.com");
    await testDb().membership.create({ data: { organizationId: org.id, userId: bob.id, role: "member" } });
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "role", membershipId: (await testDb().membership.findFirstOrThrow({ where: { userId: bob.id } })).id, role: "admin" })).status).toBe(200);
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "domain-add", domain: "acme.example" })).status).toBe(200);
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "policy", breakGlassOwners: ada.id, sessionIdleMinutes: "2880" })).status).toBe(200);

    const cells = async (headers: Record<string, string> = {}) => {
      const html = await (await pageGet(ada.jar, "/orgs/acme/audit", headers)).text();
      return [...html.matchAll(/<td data-label="[^"]*" class="wrap">([^<]*)<\/td>\s*<\/tr>/g)].map((m) => m[1]!.replaceAll("&#x27;", "'"));
    };
    const english = await cells();
    expect(english).toContain("bob@example.com: from Member to Administrator");
    expect(english).toContain("acme.example");
    expect(english).toContain("Break-glass owners: from nobody to ada@example.com; Idle limit: from the service's limit to 48 hours");
    for (const cell of english) {
      expect(cell).not.toMatch(/[{}"]/);
      expect(cell).not.toContain(bob.id);
      expect(cell).not.toContain(org.id);
    }
    const german = await cells({ "Accept-Language": "de" });
    expect(german).toContain("Notfall-Inhaber: von niemand zu ada@example.com; Inaktivitätsgrenze: von die Grenze des Dienstes zu 48 Stunden");
    // The download keeps the stored detail, ids and all.
    const download = await (await pageGet(ada.jar, "/orgs/acme/audit?format=json")).json();
    expect(download.events.find((e: { type: string }) => e.type === "member-role-changed").detail).toEqual({ userId: bob.id, from: "member", to: "admin" });
  });

  it("pages of fifty, newest first", async () => {
    const ada = await member("ada@example.com");
    const org = await createOrg(ada.jar, "acme");
    const base = Date.now() - 1_000_000;
    await testDb().organizationAuditEvent.createMany({ data: Array.from({ length: AUDIT_PAGE_SIZE + 5 }, (_, i) => ({ organizationId: org.id, type: "member-added", at: new Date(base + i * 1000) })) });
    const first = await (await jsonGet(ada.jar, "/orgs/acme/audit")).json();
    expect(first.events).toHaveLength(AUDIT_PAGE_SIZE);
    expect(first.hasNext).toBe(true);
    const second = await (await jsonGet(ada.jar, "/orgs/acme/audit?page=2")).json();
    expect(second.events).toHaveLength(6);
    expect(second.hasNext).toBe(false);
  });

  it("a member who is not an admin gets 403; a non-member the 404 of an unknown URL", async () => {
    const ada = await member("ada@example.com");
    const org = await createOrg(ada.jar, "acme");
    const bob = await member("bob@example.com");
    await testDb().membership.create({ data: { organizationId: org.id, userId: bob.id, role: "member" } });
    expect((await pageGet(bob.jar, "/orgs/acme/audit")).status).toBe(403);
    expect((await pageGet(bob.jar, "/orgs/acme/audit?format=csv")).status).toBe(403);
    const eve = await member("eve@example.com");
    expect((await pageGet(eve.jar, "/orgs/acme/audit?format=json")).status).toBe(404);
  });
});
