// The Policy section of /orgs/<slug> (docs/features/organizations.md#policy, ADR 165, 166): admins
// and owners change it after a recent sign-in, each change audited; every bad input has its own
// refusal and changes nothing; a browser without JavaScript posts the form, a JSON client its fields.
import { beforeEach, describe, expect, it } from "vitest";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { ageSession } from "../../support/reauth.ts";
import { configure } from "../email/helpers.ts";
import { addMember, createOrg, formPost, jsonGet, jsonPost, member, pageGet, useApp } from "./helpers.ts";

useApp();
beforeEach(async () => {
  await resetDatabase();
  // The deployment's limits: 8 hours idle, 24 hours absolute.
  configure({ AUTH_ORGANIZATIONS: "true", AUTH_SESSION_MAX_AGE: String(8 * 3600), AUTH_SESSION_ABSOLUTE_MAX_AGE: String(24 * 3600) });
});

async function policyOf(id: string) {
  return testDb().organization.findUniqueOrThrow({ where: { id }, select: { requireSso: true, breakGlassOwners: true, requireMfa: true, sessionIdleMinutes: true, sessionAbsoluteMinutes: true } });
}

describe(`the Policy section (${dbLabel})`, () => {
  it("an admin saves it as a JSON client: stored, audited with before and after; the page shows it to admins only", async () => {
    const owner = await member("owner@example.com");
    const org = await createOrg(owner.jar, "acme");
    const admin = await member("admin@example.com");
    await addMember(org.id, admin.id, "admin");
    const res = await jsonPost(admin.jar, "/orgs/acme", {
      intent: "policy",
      requireSso: "on",
      breakGlassOwners: owner.id,
      sessionIdleMinutes: "30",
      sessionAbsoluteMinutes: "600",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, sessionsEnded: 0 });
    expect(await policyOf(org.id)).toEqual({ requireSso: true, breakGlassOwners: owner.id, requireMfa: false, sessionIdleMinutes: 30, sessionAbsoluteMinutes: 600 });
    const event = await testDb().organizationAuditEvent.findFirstOrThrow({ where: { organizationId: org.id, type: "policy-changed" } });
    expect(event.actorId).toBe(admin.id);
    expect(JSON.parse(event.detail!)).toMatchObject({ from: { requireSso: false, sessionIdleMinutes: null }, to: { requireSso: true, breakGlassOwners: [owner.id], sessionIdleMinutes: 30 } });

    const data = await (await jsonGet(admin.jar, "/orgs/acme")).json();
    expect(data.policy).toMatchObject({ policy: { requireSso: true, requireMfa: false, breakGlassOwners: [owner.id] }, limits: { idle: 480, absolute: 1440 }, breakGlassMax: 2 });
    expect(data.policy.owners).toEqual([{ userId: owner.id, label: "owner" }]);
    const html = await (await pageGet(admin.jar, "/orgs/acme")).text();
    expect(html).toContain('id="org-policy-form"');
    // The service's limits in words, not in minutes.
    expect(data.policy.limitsText).toEqual({ idle: "8 hours", absolute: "24 hours" });
    expect(html.replaceAll("&#x27;", "'")).toContain("End a session after this many idle minutes (empty: the service's limit, 8 hours)");
    expect(html.replaceAll("&#x27;", "'")).toContain("End every session this many minutes after sign-in (empty: the service's limit, 24 hours)");
    expect(html).toContain(`name="breakGlass:${owner.id}" checked=""`);

    const plain = await member("plain@example.com");
    await addMember(org.id, plain.id, "member");
    expect((await (await jsonGet(plain.jar, "/orgs/acme")).json()).policy).toBeNull();
    expect(await (await pageGet(plain.jar, "/orgs/acme")).text()).not.toContain('id="org-policy-form"');
    const refused = await jsonPost(plain.jar, "/orgs/acme", { intent: "policy", requireSso: "on" });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error).toBe("Forbidden");
    expect((await policyOf(org.id)).sessionIdleMinutes).toBe(30);
  });

  it("without JavaScript: the form posts, lands back on the page with a notice; unticked boxes and empty limits turn things off", async () => {
    const owner = await member("owner@example.com");
    const org = await createOrg(owner.jar, "acme");
    await testDb().organization.update({ where: { id: org.id }, data: { requireSso: true, sessionIdleMinutes: 10 } });
    const res = await formPost(owner.jar, "/orgs/acme", { intent: "policy", [`breakGlass:${owner.id}`]: "on", sessionIdleMinutes: "", sessionAbsoluteMinutes: "90" });
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toMatch(/^\/orgs\/acme\?done=policy-saved/);
    expect(await policyOf(org.id)).toEqual({ requireSso: false, breakGlassOwners: owner.id, requireMfa: false, sessionIdleMinutes: null, sessionAbsoluteMinutes: 90 });
    expect(await (await pageGet(owner.jar, "/orgs/acme?done=policy-saved")).text()).toContain("The sign-in policy was saved.");
  });

  it("every bad input has its own refusal and changes nothing", async () => {
    const owner = await member("owner@example.com");
    const org = await createOrg(owner.jar, "acme");
    const admin = await member("admin@example.com");
    await addMember(org.id, admin.id, "admin");
    const second = await member("second@example.com");
    await addMember(org.id, second.id, "owner");
    const third = await member("third@example.com");
    await addMember(org.id, third.id, "owner");
    const cases: [Record<string, string>, string, string][] = [
      [{ sessionIdleMinutes: "0" }, "InvalidIdleLimit", "from 1 to 480"],
      [{ sessionIdleMinutes: "481" }, "InvalidIdleLimit", "from 1 to 480"],
      [{ sessionIdleMinutes: "1.5" }, "InvalidIdleLimit", "from 1 to 480"],
      [{ sessionIdleMinutes: "abc" }, "InvalidIdleLimit", "from 1 to 480"],
      [{ sessionIdleMinutes: "-5" }, "InvalidIdleLimit", "from 1 to 480"],
      [{ sessionAbsoluteMinutes: "1441" }, "InvalidAbsoluteLimit", "from 1 to 1440"],
      [{ breakGlassOwners: admin.id }, "BreakGlassNotOwner", "current owners"],
      [{ breakGlassOwners: "nobody" }, "BreakGlassNotOwner", "current owners"],
      [{ breakGlassOwners: `${owner.id} ${second.id} ${third.id}` }, "TooManyBreakGlassOwners", "at most two"],
    ];
    for (const [fields, code, words] of cases) {
      const res = await jsonPost(owner.jar, "/orgs/acme", { intent: "policy", requireSso: "on", ...fields });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      const body = await res.json();
      expect(body.error, JSON.stringify(fields)).toBe(code);
      expect(body.message).toContain(words);
    }
    // The form's answer: the page with the sentence beside the form.
    const form = await formPost(owner.jar, "/orgs/acme", { intent: "policy", sessionIdleMinutes: "9999" });
    expect(form.status).toBe(400);
    expect(await form.text()).toContain("A session limit must be a whole number of minutes from 1 to 480.");
    expect(await policyOf(org.id)).toEqual({ requireSso: false, breakGlassOwners: "", requireMfa: false, sessionIdleMinutes: null, sessionAbsoluteMinutes: null });
    expect(await testDb().organizationAuditEvent.count({ where: { organizationId: org.id, type: "policy-changed" } })).toBe(0);
  });

  it("requireSso over a verified domain no connection of the organization serves is refused (nobody could sign in); with a connection, saved", async () => {
    const owner = await member("owner@example.com");
    const org = await createOrg(owner.jar, "acme");
    const domain = async (name: string) =>
      testDb().organizationDomain.create({ data: { organizationId: org.id, domain: name, verificationToken: "t", state: "verified", verifiedDomain: name, verifiedAt: new Date() } });
    await domain("acme.test");
    await domain("acme-labs.test");
    const refused = await jsonPost(owner.jar, "/orgs/acme", { intent: "policy", requireSso: "on" });
    expect(refused.status).toBe(409);
    expect((await refused.json()).error).toBe("SsoWithoutConnection");
    // One domain served is not enough: the other's people would be locked out.
    await testDb().oidcConnection.create({ data: { organizationId: org.id, issuer: "https://login.acme.test", clientId: "c", clientSecretSealed: "x", domains: "acme.test" } });
    expect((await jsonPost(owner.jar, "/orgs/acme", { intent: "policy", requireSso: "on" })).status).toBe(409);
    const form = await formPost(owner.jar, "/orgs/acme", { intent: "policy", requireSso: "on" });
    expect(await form.text()).toContain("for each of the organization&#x27;s verified domains");
    expect((await policyOf(org.id)).requireSso).toBe(false);
    // Another organization's connection listing the domain does not count.
    const other = await testDb().organization.create({ data: { name: "Other", slug: "other" } });
    await testDb().oidcConnection.create({ data: { organizationId: other.id, issuer: "https://login.other.test", clientId: "c", clientSecretSealed: "x", domains: "acme-labs.test" } });
    expect((await jsonPost(owner.jar, "/orgs/acme", { intent: "policy", requireSso: "on" })).status).toBe(409);
    await testDb().oidcConnection.create({ data: { organizationId: org.id, issuer: "https://login2.acme.test", clientId: "c", clientSecretSealed: "x", domains: "acme-labs.test" } });
    expect((await jsonPost(owner.jar, "/orgs/acme", { intent: "policy", requireSso: "on" })).status).toBe(200);
    expect((await policyOf(org.id)).requireSso).toBe(true);
    // Turning it off needs no connection.
    await testDb().oidcConnection.deleteMany({});
    expect((await jsonPost(owner.jar, "/orgs/acme", { intent: "policy" })).status).toBe(200);
  });

  it("needs a recent sign-in: past it, 403 ReauthRequired and nothing changes", async () => {
    const owner = await member("owner@example.com");
    const org = await createOrg(owner.jar, "acme");
    await ageSession(owner.jar, 11);
    const res = await jsonPost(owner.jar, "/orgs/acme", { intent: "policy", requireMfa: "on" });
    expect(res.status).toBe(403);
    expect((await res.json()).error).toBe("ReauthRequired");
    expect((await policyOf(org.id)).requireMfa).toBe(false);
  });
});
