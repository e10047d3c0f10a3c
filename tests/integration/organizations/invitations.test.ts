// Invitations bound to the verified address (docs/features/organizations.md, ADR 147), through the
// app's pipeline and a real SMTP sink: the e-mail's link is taken only by the signed-in account
// whose VERIFIED address was invited — never by an account that registered the address without
// proving it, nor by another account the link was forwarded to (told so, nothing changes); single
// use, 7 days, revocable, resent with limits, never a role above the inviter's.
import { beforeEach, describe, expect, it } from "vitest";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar, get } from "../../support/http.ts";
import { signIn } from "../../support/auth.ts";
import { linkIn, waitForMessages } from "../../support/smtp-sink.ts";
import { configure, useSmtpSink } from "../email/helpers.ts";
import { createOrg, jsonGet, jsonPost, member, pageGet, send, sessionJson, useApp, formPost } from "./helpers.ts";
import { createUser } from "../../support/auth.ts";

useApp();
const smtp = useSmtpSink();
beforeEach(() => configure({ AUTH_ORGANIZATIONS: "true" }));

/** Ada owns "acme" and invites `email` as `role`; returns the link the e-mail carries. */
async function invited(email: string, role = "member", nth = 1) {
  const ada = await member("ada@example.com", "Ada Lovelace");
  const org = await createOrg(ada.jar, "acme", "Acme");
  const res = await jsonPost(ada.jar, "/orgs/acme", { intent: "invite", email, role });
  expect(res.status).toBe(200);
  const [message] = (await waitForMessages(smtp.sink, nth)).slice(-1);
  return { ada, org, message: message!, link: linkIn(message!) };
}

const invitationPath = (link: URL) => `${link.pathname}${link.search}`;
const members = (organizationId: string) => testDb().membership.findMany({ where: { organizationId }, select: { userId: true, role: true } });

describe(`invitations (${dbLabel})`, () => {
  it("the invited address's verified account sees the invitation and joins with the role; the e-mail names the organization and inviter; all audited", async () => {
    const { ada, org, message, link } = await invited("bob@example.com", "admin");
    expect(message.to).toContain("bob@example.com");
    expect(message.subject).toBe("Join Acme on Vestibule");
    expect(message.text).toContain("Ada Lovelace invited bob@example.com to join Acme on Vestibule (localhost:3000) as Administrator.");
    expect(link.pathname).toBe("/orgs/invitation");
    // Only the hash is stored: the token of the link is nowhere in the database.
    const row = await testDb().invitation.findFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(link.searchParams.get("token"));

    const bob = await member("bob@example.com");
    const page = await jsonGet(bob.jar, invitationPath(link));
    expect(page.status).toBe(200);
    expect((await page.json()).invitation).toEqual({ state: "open", organization: "Acme", role: "admin" });
    const accepted = await jsonPost(bob.jar, "/orgs/invitation", { token: link.searchParams.get("token")! });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toEqual({ ok: true, organization: { id: org.id, slug: "acme" } });
    expect(await members(org.id)).toContainEqual({ userId: bob.id, role: "admin" });
    // Joined: the organization is Bob's active one.
    expect((await sessionJson(bob.jar))?.organization).toEqual({ id: org.id, slug: "acme", role: "admin" });
    const types = (await testDb().organizationAuditEvent.findMany({ where: { organizationId: org.id }, orderBy: { at: "asc" } })).map((e) => [e.type, e.actorId]);
    expect(types).toEqual([["organization-created", ada.id], ["invitation-sent", ada.id], ["member-added", bob.id], ["invitation-accepted", bob.id]]);
    // Single use: the same link again is invalid.
    expect((await jsonPost(bob.jar, "/orgs/invitation", { token: link.searchParams.get("token")! })).status).toBe(404);
  });

  it("an account that registered the invited address without proving it never takes the invitation; once it proves it, it can", async () => {
    const squatter = await createUser("bob@example.com", "Squatter");
    const { org, link } = await invited("bob@example.com");
    const { jar } = await signIn(new CookieJar(), "bob@example.com");
    const token = link.searchParams.get("token")!;
    const page = await jsonGet(jar, invitationPath(link));
    expect(page.status).toBe(403);
    expect((await page.json()).invitation).toEqual({ state: "unverified" });
    const refused = await jsonPost(jar, "/orgs/invitation", { token });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error).toBe("Unverified");
    expect((await members(org.id)).map((m) => m.userId)).not.toContain(squatter.id);
    expect((await testDb().invitation.findFirstOrThrow()).acceptedAt).toBeNull();

    await testDb().user.update({ where: { id: squatter.id }, data: { emailVerified: new Date() } });
    expect((await jsonPost(jar, "/orgs/invitation", { token })).status).toBe(200);
  });

  it("a forwarded invitation: another signed-in account is told it is for another address, and nothing changes (page, form and JSON)", async () => {
    const { org, link } = await invited("bob@example.com");
    const eve = await member("eve@example.com");
    const token = link.searchParams.get("token")!;
    const page = await pageGet(eve.jar, invitationPath(link));
    expect(page.status).toBe(403);
    const html = await page.text();
    expect(html).toContain("This invitation is for another address. Nothing was changed.");
    expect(html).not.toContain("bob@example.com");
    const form = await formPost(eve.jar, "/orgs/invitation", { token });
    expect(form.status).toBe(403);
    const json = await jsonPost(eve.jar, "/orgs/invitation", { token });
    expect(await json.json()).toMatchObject({ error: "WrongAddress" });
    expect((await members(org.id)).map((m) => m.userId)).not.toContain(eve.id);
    // The invitation is still there for Bob.
    const bob = await member("bob@example.com");
    expect((await jsonPost(bob.jar, "/orgs/invitation", { token })).status).toBe(200);
  });

  it("after joining by the form, the answer is a redirect to the organization naming it; the used link opened again by the one who used it says they are already a member, with a link", async () => {
    const { link } = await invited("bob@example.com");
    const bob = await member("bob@example.com");
    const token = link.searchParams.get("token")!;
    const joined = await formPost(bob.jar, "/orgs/invitation", { token });
    expect(joined.status).toBe(302);
    expect(joined.headers.get("Location")).toBe("/orgs/acme?done=joined");
    expect(await (await pageGet(bob.jar, "/orgs/acme?done=joined")).text()).toContain("You joined Acme.");
    // Back to the invitation page: not "can no longer be used", but where the member already is.
    const again = await pageGet(bob.jar, invitationPath(link));
    expect(again.status).toBe(200);
    const html = await again.text();
    expect(html.replace(/<[^>]+>/g, "")).toContain("You are already a member of Acme.");
    expect(html).toContain('href="/orgs/acme"');
    expect((await (await jsonGet(bob.jar, invitationPath(link))).json()).invitation).toEqual({ state: "member", organization: "Acme", slug: "acme" });
    // Anyone else holding the used link still learns nothing.
    const eve = await member("eve@example.com");
    expect((await pageGet(eve.jar, invitationPath(link))).status).toBe(404);
  });

  it("a visitor without a session is sent to sign in and comes back to the invitation", async () => {
    const { link } = await invited("bob@example.com");
    const res = await send(get(invitationPath(link), { headers: { Accept: "text/html" } }));
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("Location")!, "http://localhost:3000");
    expect(location.pathname).toBe("/auth/signin");
    expect(location.searchParams.get("callbackUrl")).toBe(invitationPath(link));
  });

  it("expired, revoked or made-up links are invalid (404) and join nobody", async () => {
    const { ada, org, link } = await invited("bob@example.com");
    const bob = await member("bob@example.com");
    const token = link.searchParams.get("token")!;
    await testDb().invitation.updateMany({ data: { expires: new Date(Date.now() - 1000) } });
    expect((await jsonPost(bob.jar, "/orgs/invitation", { token })).status).toBe(404);
    await testDb().invitation.updateMany({ data: { expires: new Date(Date.now() + 86_400_000) } });

    const row = await testDb().invitation.findFirstOrThrow();
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "invitation-revoke", invitationId: row.id })).status).toBe(200);
    const revoked = await jsonPost(bob.jar, "/orgs/invitation", { token });
    expect(revoked.status).toBe(404);
    expect((await revoked.json()).error).toBe("InvalidInvitation");
    expect((await jsonPost(bob.jar, "/orgs/invitation", { token: "0".repeat(64) })).status).toBe(404);
    expect((await jsonPost(bob.jar, "/orgs/invitation", { token: "not-a-token" })).status).toBe(404);
    expect((await members(org.id)).map((m) => m.userId)).not.toContain(bob.id);
    // The lifetime is 7 days.
    const fresh = await jsonPost(ada.jar, "/orgs/acme", { intent: "invite", email: "cy@example.com", role: "member" });
    expect(fresh.status).toBe(200);
    const cy = await testDb().invitation.findFirstOrThrow({ where: { email: "cy@example.com" } });
    expect(Math.abs(cy.expires.getTime() - cy.createdAt.getTime() - 7 * 86_400_000)).toBeLessThan(5_000);
  });

  it("resend: not within a minute, a new link each time (the old one stops working), at most five sends", async () => {
    const { ada, link } = await invited("bob@example.com");
    const row = await testDb().invitation.findFirstOrThrow();
    const soon = await jsonPost(ada.jar, "/orgs/acme", { intent: "invitation-resend", invitationId: row.id });
    expect(soon.status).toBe(429);
    expect((await soon.json()).error).toBe("TooSoon");
    let last = link;
    for (let send = 2; send <= 5; send++) {
      await testDb().invitation.update({ where: { id: row.id }, data: { lastSentAt: new Date(Date.now() - 120_000) } });
      expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "invitation-resend", invitationId: row.id })).status).toBe(200);
      const messages = await waitForMessages(smtp.sink, send);
      const next = linkIn(messages.at(-1)!);
      expect(next.searchParams.get("token")).not.toBe(last.searchParams.get("token"));
      last = next;
    }
    await testDb().invitation.update({ where: { id: row.id }, data: { lastSentAt: new Date(Date.now() - 120_000) } });
    const sixth = await jsonPost(ada.jar, "/orgs/acme", { intent: "invitation-resend", invitationId: row.id });
    expect(sixth.status).toBe(429);
    expect((await sixth.json()).error).toBe("TooManySends");
    const bob = await member("bob@example.com");
    expect((await jsonPost(bob.jar, "/orgs/invitation", { token: link.searchParams.get("token")! })).status).toBe(404);
    expect((await jsonPost(bob.jar, "/orgs/invitation", { token: last.searchParams.get("token")! })).status).toBe(200);
  });

  it("never a role above the inviter's; members do not invite; one open invitation per address; members are not invited again", async () => {
    const { ada, org } = await invited("bob@example.com");
    const cy = await member("cy@example.com");
    await testDb().membership.create({ data: { organizationId: org.id, userId: cy.id, role: "admin" } });
    const owner = await jsonPost(cy.jar, "/orgs/acme", { intent: "invite", email: "dan@example.com", role: "owner" });
    expect(owner.status).toBe(403);
    expect((await jsonPost(cy.jar, "/orgs/acme", { intent: "invite", email: "dan@example.com", role: "admin" })).status).toBe(200);
    const dee = await member("dee@example.com");
    await testDb().membership.create({ data: { organizationId: org.id, userId: dee.id, role: "member" } });
    expect((await jsonPost(dee.jar, "/orgs/acme", { intent: "invite", email: "eve@example.com", role: "member" })).status).toBe(403);
    const again = await jsonPost(ada.jar, "/orgs/acme", { intent: "invite", email: "BOB@example.com", role: "member" });
    expect(again.status).toBe(409);
    expect((await again.json()).error).toBe("AlreadyInvited");
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "invite", email: "cy@example.com", role: "member" })).status).toBe(409);
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "invite", email: "not an address", role: "member" })).status).toBe(400);
    expect(await testDb().invitation.count()).toBe(2);
  });

  it("new invitations are rate-limited per organization (ORG_INVITE)", async () => {
    configure({ AUTH_RATE_LIMIT_ORG_INVITE: "2/3600" });
    const { ada } = await invited("a1@example.com");
    expect((await jsonPost(ada.jar, "/orgs/acme", { intent: "invite", email: "a2@example.com", role: "member" })).status).toBe(200);
    const third = await jsonPost(ada.jar, "/orgs/acme", { intent: "invite", email: "a3@example.com", role: "member" });
    expect(third.status).toBe(429);
    expect((await third.json()).error).toBe("RateLimited");
    expect(await testDb().invitation.count()).toBe(2);
  });

  it("the e-mail is written in the invited account's own language when it has one", async () => {
    const bob = await createUser("bob@example.com", "Bob");
    await testDb().user.update({ where: { id: bob.id }, data: { locale: "fr" } });
    const { message } = await invited("bob@example.com");
    expect(message.subject).toBe("Rejoignez Acme sur Vestibule");
  });

  it("two presses of Join at once: one membership, one acceptance", async () => {
    const { org, link } = await invited("bob@example.com");
    const bob = await member("bob@example.com");
    const token = link.searchParams.get("token")!;
    const results = await Promise.all([jsonPost(bob.jar, "/orgs/invitation", { token }), jsonPost(bob.jar, "/orgs/invitation", { token })]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 404]);
    expect((await members(org.id)).filter((m) => m.userId === bob.id)).toHaveLength(1);
    expect(await testDb().organizationAuditEvent.count({ where: { organizationId: org.id, type: "invitation-accepted" } })).toBe(1);
  });
});
