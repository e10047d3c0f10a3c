// Domains verified by DNS TXT (docs/features/organizations.md, ADR 149) against a DNS server in
// this process (AUTH_DNS_SERVERS points node:dns at it): "Verify" finds the token at
// _vestibule-challenge.<domain>; consumer domains are refused; a claim nobody verified never
// blocks the real owner; a verified domain belongs to one organization; the daily check takes the
// verification away when the record goes, and the page shows each domain's state.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { recheckDomains } from "../../../app/auth/organizations/index.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { startDnsServer, type DnsServer } from "../../support/dns-server.ts";
import { configure } from "../email/helpers.ts";
import { addConnection } from "../../../app/auth/saml/index.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { CookieJar } from "../../support/http.ts";
import { IDP_CERT } from "../saml/idp.ts";
import { createOrg, formPost, jsonGet, jsonPost, member, pageGet, useApp } from "./helpers.ts";

useApp();
let dns: DnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(() => dns.close());
beforeEach(async () => {
  await resetDatabase();
  dns.clear();
  configure({ AUTH_ORGANIZATIONS: "true", AUTH_DNS_SERVERS: dns.address });
});

type DomainJson = { id: string; domain: string; state: string; recordName: string; recordValue: string; lastCheckedAt: string | null };
async function domainsOf(jar: Parameters<typeof jsonGet>[0], slug: string): Promise<DomainJson[]> {
  return (await (await jsonGet(jar, `/orgs/${slug}`)).json()).domains;
}

async function ownerWithDomain(slug: string, domain: string, email = `${slug}@example.com`) {
  const owner = await member(email);
  const org = await createOrg(owner.jar, slug);
  expect((await jsonPost(owner.jar, `/orgs/${slug}`, { intent: "domain-add", domain })).status).toBe(200);
  const [row] = (await domainsOf(owner.jar, slug)).filter((d) => d.domain === domain.toLowerCase().replace(/\.$/, ""));
  return { owner, org, row: row! };
}

describe(`organization domains (${dbLabel})`, () => {
  it("an admin adds a domain and is shown the TXT record; Verify finds it; the page shows the state; audited", async () => {
    const { owner, org, row } = await ownerWithDomain("acme", "Acme.Example.");
    expect(row).toMatchObject({ domain: "acme.example", state: "pending", recordName: "_vestibule-challenge.acme.example" });
    expect(row.recordValue).toMatch(/^vestibule-[A-Za-z0-9_-]{32}$/);

    // Not published yet: refused, still pending.
    const missing = await jsonPost(owner.jar, "/orgs/acme", { intent: "domain-verify", domainId: row.id });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toBe("RecordMissing");
    expect((await domainsOf(owner.jar, "acme"))[0]!.state).toBe("pending");
    expect(dns.asked).toContain("_vestibule-challenge.acme.example 16");

    dns.setTxt(row.recordName, ["v=spf1 -all", row.recordValue]);
    expect((await jsonPost(owner.jar, "/orgs/acme", { intent: "domain-verify", domainId: row.id })).status).toBe(200);
    const [verified] = await domainsOf(owner.jar, "acme");
    expect(verified!.state).toBe("verified");
    const html = await (await pageGet(owner.jar, "/orgs/acme")).text();
    expect(html).toMatch(/data-domain="acme\.example" data-state="verified"/);
    expect(html).toContain("_vestibule-challenge.acme.example");
    const types = (await testDb().organizationAuditEvent.findMany({ where: { organizationId: org.id }, orderBy: { at: "asc" } })).map((e) => e.type);
    expect(types).toEqual(["organization-created", "domain-added", "domain-verified"]);
  });

  it("a form's failed check is told beside the domain, naming it, saying DNS takes time, with the record to copy; a refused addition names the domain at its field and keeps it", async () => {
    const { owner, row } = await ownerWithDomain("acme", "acme.example");
    const form = await formPost(owner.jar, "/orgs/acme", { intent: "domain-verify", domainId: row.id });
    expect(form.status).toBe(400);
    const html = await form.text();
    const error = html.match(new RegExp(`<p class="alert" role="alert" id="domain-error-${row.id}">([^<]*)</p>`));
    expect(error?.[1]).toContain("The TXT record for acme.example was not found");
    expect(error?.[1]).toContain("DNS changes can take a few hours to appear");
    expect(html).toContain(row.recordName);
    expect(html).toContain(row.recordValue);
    expect(html).not.toContain('id="org-form-error"');
    // The page afterwards says the same about the last check.
    expect((await (await pageGet(owner.jar, "/orgs/acme")).text()).replace(/<[^>]+>/g, "")).toContain("the TXT record above was not found yet");

    const again = await formPost(owner.jar, "/orgs/acme", { intent: "domain-add", domain: "Acme.example" });
    expect(again.status).toBe(409);
    const page = await again.text();
    expect(page).toMatch(/<p class="field-error" id="domain-name-error" role="alert" data-error-for="domain">acme\.example is already on the list\.<\/p>/);
    expect(page).toMatch(/<input id="domain-name"[^>]*value="Acme\.example"/);
  });

  it("consumer mailbox domains, their subdomains and malformed names are refused", async () => {
    const owner = await member("ada@example.com");
    await createOrg(owner.jar, "acme");
    for (const domain of ["gmail.com", "GMAIL.COM", "mail.gmail.com", "outlook.com"]) {
      const res = await jsonPost(owner.jar, "/orgs/acme", { intent: "domain-add", domain });
      expect(res.status, domain).toBe(400);
      expect((await res.json()).error, domain).toBe("ConsumerDomain");
    }
    for (const domain of ["localhost", "acme", "1.2.3.4", "a..b.com", "-a.com", "https://acme.example/", "ada@acme.example", ""]) {
      expect((await jsonPost(owner.jar, "/orgs/acme", { intent: "domain-add", domain })).status, domain).toBe(400);
    }
    expect(await testDb().organizationDomain.count()).toBe(0);
  });

  it("a domain claimed first by another organization that cannot verify it does not block its real owner; once verified it is the owner's alone", async () => {
    const squatter = await ownerWithDomain("squatter", "acme.example");
    const real = await ownerWithDomain("acme", "acme.example");
    expect(squatter.row.recordValue).not.toBe(real.row.recordValue);
    dns.setTxt(real.row.recordName, [real.row.recordValue]);
    expect((await jsonPost(real.owner.jar, "/orgs/acme", { intent: "domain-verify", domainId: real.row.id })).status).toBe(200);
    // The squatter's token is not in DNS: refused.
    expect((await jsonPost(squatter.owner.jar, "/orgs/squatter", { intent: "domain-verify", domainId: squatter.row.id })).status).toBe(400);
    // Even if both tokens were published, a verified domain belongs to one organization.
    dns.setTxt(real.row.recordName, [real.row.recordValue, squatter.row.recordValue]);
    const taken = await jsonPost(squatter.owner.jar, "/orgs/squatter", { intent: "domain-verify", domainId: squatter.row.id });
    expect(taken.status).toBe(409);
    expect((await taken.json()).error).toBe("DomainTaken");
    expect(await testDb().organizationDomain.count({ where: { verifiedDomain: "acme.example" } })).toBe(1);
    expect((await domainsOf(squatter.owner.jar, "squatter"))[0]!.state).toBe("pending");
  });

  it("a resolver that fails is reported as such (502) and changes nothing", async () => {
    const { owner, row } = await ownerWithDomain("acme", "acme.example");
    dns.setTxt(row.recordName, [row.recordValue]);
    dns.failing = true;
    const res = await jsonPost(owner.jar, "/orgs/acme", { intent: "domain-verify", domainId: row.id });
    expect(res.status).toBe(502);
    expect((await res.json()).error).toBe("DnsError");
    expect((await domainsOf(owner.jar, "acme"))[0]!.state).toBe("pending");
  });

  it("the daily check: a record gone a day after the last check ends the verification (audited, shown); back in DNS, verified again; a failing resolver changes nothing", async () => {
    const { owner, org, row } = await ownerWithDomain("acme", "acme.example");
    dns.setTxt(row.recordName, [row.recordValue]);
    expect((await jsonPost(owner.jar, "/orgs/acme", { intent: "domain-verify", domainId: row.id })).status).toBe(200);

    // Checked moments ago: not due, even with the record gone.
    dns.setTxt(row.recordName, []);
    expect(await recheckDomains()).toEqual({ checked: 0, failed: 0, restored: 0 });
    const dayAgo = () => testDb().organizationDomain.update({ where: { id: row.id }, data: { lastCheckedAt: new Date(Date.now() - 25 * 3_600_000) } });

    await dayAgo();
    dns.failing = true;
    expect(await recheckDomains()).toMatchObject({ checked: 1, failed: 0 });
    expect((await domainsOf(owner.jar, "acme"))[0]!.state).toBe("verified");
    dns.failing = false;

    expect(await recheckDomains()).toEqual({ checked: 1, failed: 1, restored: 0 });
    const failed = await testDb().organizationDomain.findUniqueOrThrow({ where: { id: row.id } });
    expect(failed).toMatchObject({ state: "failed", verifiedDomain: null });
    expect((await testDb().organizationAuditEvent.findMany({ where: { organizationId: org.id }, orderBy: { at: "desc" }, take: 1 }))[0]).toMatchObject({ type: "domain-failed", actorId: null });
    expect(await (await pageGet(owner.jar, "/orgs/acme")).text()).toMatch(/data-state="failed"/);

    await dayAgo();
    dns.setTxt(row.recordName, [row.recordValue]);
    expect(await recheckDomains()).toEqual({ checked: 1, failed: 0, restored: 1 });
    expect((await domainsOf(owner.jar, "acme"))[0]!.state).toBe("verified");
  });

  it("a domain verified while requireSso is on (by hand, and restored by the daily check): its people's password sessions end, a break-glass owner's and others' stay (ADR 165 amended)", async () => {
    const { owner, org, row } = await ownerWithDomain("acme", "acme.example");
    // The organization already requires its connection (for another verified domain it serves).
    await testDb().organizationDomain.create({ data: { organizationId: org.id, domain: "acme.other", verificationToken: "t", state: "verified", verifiedDomain: "acme.other", verifiedAt: new Date() } });
    const added = await addConnection({ organizationId: org.id, idpEntityId: "https://idp.acme.example", ssoUrl: "https://idp.acme.example/sso", certificates: [IDP_CERT], domains: ["acme.other"] });
    if (!added.ok) throw new Error(added.reason);
    const keeper = await createUser("keeper@acme.example");
    await testDb().membership.create({ data: { organizationId: org.id, userId: keeper.id, role: "owner" } });
    await testDb().organization.update({ where: { id: org.id }, data: { requireSso: true, breakGlassOwners: keeper.id } });
    await createUser("ada@acme.example");
    await signIn(new CookieJar(), "ada@acme.example");
    await signIn(new CookieJar(), "keeper@acme.example");
    const live = (email: string) => testDb().session.count({ where: { user: { email }, revokedAt: null } });
    expect(await live("ada@acme.example")).toBe(1);

    dns.setTxt(row.recordName, [row.recordValue]);
    expect((await jsonPost(owner.jar, "/orgs/acme", { intent: "domain-verify", domainId: row.id })).status).toBe(200);
    expect(await live("ada@acme.example")).toBe(0);
    expect(await live("keeper@acme.example")).toBe(1);
    expect(await live("acme@example.com")).toBeGreaterThan(0);
    const ended = await testDb().organizationAuditEvent.findFirstOrThrow({ where: { organizationId: org.id, type: "sso-sessions-ended" } });
    expect(JSON.parse(ended.detail!)).toMatchObject({ domain: "acme.example", sessions: 1, because: "domain-verified" });

    // The verification lapses; Ada signs in with her password meanwhile; the daily check restores it.
    await testDb().organizationDomain.update({ where: { id: row.id }, data: { state: "failed", verifiedDomain: null, lastCheckedAt: new Date(Date.now() - 25 * 3_600_000) } });
    await signIn(new CookieJar(), "ada@acme.example");
    expect(await live("ada@acme.example")).toBe(1);
    expect(await recheckDomains()).toMatchObject({ restored: 1 });
    expect(await live("ada@acme.example")).toBe(0);
  });

  it("removing a domain frees it; members who are not admins neither see nor change domains", async () => {
    const { owner, org, row } = await ownerWithDomain("acme", "acme.example");
    const bob = await member("bob@example.com");
    await testDb().membership.create({ data: { organizationId: org.id, userId: bob.id, role: "member" } });
    expect((await (await jsonGet(bob.jar, "/orgs/acme")).json()).domains).toBeNull();
    expect((await jsonPost(bob.jar, "/orgs/acme", { intent: "domain-remove", domainId: row.id })).status).toBe(403);
    expect((await jsonPost(bob.jar, "/orgs/acme", { intent: "domain-add", domain: "bob.example" })).status).toBe(403);
    expect((await jsonPost(owner.jar, "/orgs/acme", { intent: "domain-add", domain: "acme.example" })).status).toBe(409);
    expect((await jsonPost(owner.jar, "/orgs/acme", { intent: "domain-remove", domainId: row.id })).status).toBe(200);
    expect(await testDb().organizationDomain.count()).toBe(0);
  });
});
