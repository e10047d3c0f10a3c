// Every model through the generated client on the real database: create, read, update, delete,
// the unique constraints the auth core relies on (P2002), referential actions, transactions.
import { beforeEach, describe, expect, test } from "vitest";
import { dbProvider } from "../../../app/db/client.server.ts";
import { Prisma } from "../../../prisma/generated/sqlite/client.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";

const db = testDb;

async function uniqueViolation(promise: Promise<unknown>): Promise<Prisma.PrismaClientKnownRequestError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, "expected a unique-constraint violation").toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
  const known = error as Prisma.PrismaClientKnownRequestError;
  expect(known.code).toBe("P2002");
  return known;
}

const user = (email: string | null = "ada@example.com") => db().user.create({ data: { email, name: "Ada" } });

beforeEach(async () => {
  await resetDatabase();
});

describe(`models on ${dbLabel}`, () => {
  test("the client talks to the database this project is about", () => {
    expect(dbProvider()).toBe(dbLabel);
  });

  test("User: create with defaults, find by e-mail, update, delete; e-mail is unique, but many users may have none", async () => {
    const before = Date.now();
    const ada = await user();
    expect(ada.id).toMatch(/^c[a-z0-9]{20,}$/);
    expect(ada.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(ada.emailVerified).toBeNull();

    const verified = new Date("2026-01-02T03:04:05.678Z");
    const updated = await db().user.update({ where: { email: "ada@example.com" }, data: { name: "Ada L.", emailVerified: verified } });
    expect(updated.name).toBe("Ada L.");
    expect(updated.emailVerified?.toISOString()).toBe(verified.toISOString());
    expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(ada.updatedAt.getTime());

    const e = await uniqueViolation(user("ada@example.com"));
    expect(JSON.stringify(e.meta)).toMatch(/email/);

    await user(null);
    await user(null);
    expect(await db().user.count({ where: { email: null } })).toBe(2);

    await db().user.delete({ where: { id: ada.id } });
    expect(await db().user.findUnique({ where: { email: "ada@example.com" } })).toBeNull();
  });

  test("Account: linked to a user, found by (provider, providerAccountId), which is unique", async () => {
    const ada = await user();
    const account = await db().account.create({
      data: { userId: ada.id, type: "oidc", provider: "oidc", providerAccountId: "sub-1", accessToken: "sealed", expiresAt: 1_900_000_000 },
    });
    const found = await db().account.findUnique({
      where: { provider_providerAccountId: { provider: "oidc", providerAccountId: "sub-1" } },
      include: { user: true },
    });
    expect(found?.id).toBe(account.id);
    expect(found?.user.email).toBe("ada@example.com");
    expect(found?.expiresAt).toBe(1_900_000_000);

    await uniqueViolation(db().account.create({ data: { userId: ada.id, type: "oidc", provider: "oidc", providerAccountId: "sub-1" } }));
    // The same subject at another provider is another account.
    await db().account.create({ data: { userId: ada.id, type: "oauth", provider: "github", providerAccountId: "sub-1" } });

    await db().account.update({ where: { id: account.id }, data: { refreshToken: "sealed-2" } });
    expect((await db().account.findUniqueOrThrow({ where: { id: account.id } })).refreshToken).toBe("sealed-2");
    await db().account.delete({ where: { id: account.id } });
    expect(await db().account.count()).toBe(1);
  });

  test("Session: found by token hash, which is unique; expired rows are deleted by date", async () => {
    const ada = await user();
    const now = Date.now();
    await db().session.create({ data: { tokenHash: "h-live", userId: ada.id, expires: new Date(now + 60_000), userAgent: "test" } });
    await db().session.create({ data: { tokenHash: "h-old", userId: ada.id, expires: new Date(now - 60_000) } });

    const live = await db().session.findUnique({ where: { tokenHash: "h-live" }, include: { user: true } });
    expect(live?.user.id).toBe(ada.id);
    expect(live?.userAgent).toBe("test");

    await uniqueViolation(db().session.create({ data: { tokenHash: "h-live", userId: ada.id, expires: new Date(now) } }));

    const touched = new Date(now + 5_000);
    await db().session.update({ where: { tokenHash: "h-live" }, data: { lastUsedAt: touched } });
    expect((await db().session.findUniqueOrThrow({ where: { tokenHash: "h-live" } })).lastUsedAt.getTime()).toBe(touched.getTime());

    const { count } = await db().session.deleteMany({ where: { expires: { lt: new Date(now) } } });
    expect(count).toBe(1);
    expect((await db().session.findMany()).map((s) => s.tokenHash)).toEqual(["h-live"]);
  });

  test("VerificationToken: unique per (identifier, tokenHash), single use by compound delete", async () => {
    const expires = new Date(Date.now() + 86_400_000);
    const token = await db().verificationToken.create({ data: { identifier: "ada@example.com", tokenHash: "t1", expires } });
    expect(token.purpose).toBe("signin");
    expect(token.userId).toBeNull();

    await uniqueViolation(db().verificationToken.create({ data: { identifier: "ada@example.com", tokenHash: "t1", expires } }));
    await db().verificationToken.create({ data: { identifier: "bob@example.com", tokenHash: "t1", expires } });

    const where = { identifier_tokenHash: { identifier: "ada@example.com", tokenHash: "t1" } };
    expect((await db().verificationToken.delete({ where })).identifier).toBe("ada@example.com");
    // The second use of the same link finds nothing to consume.
    await expect(db().verificationToken.delete({ where })).rejects.toMatchObject({ code: "P2025" });
    expect(await db().verificationToken.count()).toBe(1);
  });

  test("Password: at most one per user; upsert replaces it", async () => {
    const ada = await user();
    await db().password.create({ data: { userId: ada.id, hash: "argon2-1" } });
    await uniqueViolation(db().password.create({ data: { userId: ada.id, hash: "argon2-2" } }));
    await db().password.upsert({ where: { userId: ada.id }, create: { userId: ada.id, hash: "x" }, update: { hash: "argon2-3" } });
    const found = await db().user.findUniqueOrThrow({ where: { id: ada.id }, include: { password: true } });
    expect(found.password?.hash).toBe("argon2-3");
  });

  test("AuthEvent: with or without a user, listed by user and time", async () => {
    const ada = await user();
    await db().authEvent.create({ data: { type: "signin", userId: ada.id, ip: "127.0.0.1", detail: '{"provider":"credentials"}', at: new Date(1_000) } });
    await db().authEvent.create({ data: { type: "signin-failed", detail: "{}" } });
    await db().authEvent.create({ data: { type: "signout", userId: ada.id, at: new Date(2_000) } });
    const mine = await db().authEvent.findMany({ where: { userId: ada.id }, orderBy: { at: "desc" } });
    expect(mine.map((e) => e.type)).toEqual(["signout", "signin"]);
    expect(await db().authEvent.count({ where: { userId: null } })).toBe(1);
  });

  test("deleting a user deletes its accounts, sessions and password, and keeps its events with its id (ADR 086)", async () => {
    const ada = await user();
    const bob = await user("bob@example.com");
    for (const u of [ada, bob]) {
      await db().account.create({ data: { userId: u.id, type: "oauth", provider: "github", providerAccountId: `gh-${u.id}` } });
      await db().session.create({ data: { tokenHash: `s-${u.id}`, userId: u.id, expires: new Date(Date.now() + 60_000) } });
      await db().password.create({ data: { userId: u.id, hash: "h" } });
      await db().authEvent.create({ data: { type: "signin", userId: u.id } });
    }

    await db().user.delete({ where: { id: ada.id } });

    expect(await db().account.count({ where: { userId: ada.id } })).toBe(0);
    expect(await db().session.count({ where: { userId: ada.id } })).toBe(0);
    expect(await db().password.count({ where: { userId: ada.id } })).toBe(0);
    const events = await db().authEvent.findMany();
    expect(events.map((e) => e.userId).sort()).toEqual([ada.id, bob.id].sort());
    // Bob's rows are untouched.
    expect(await db().account.count()).toBe(1);
    expect(await db().session.count()).toBe(1);
    expect(await db().password.count()).toBe(1);
  });

  test("a row pointing at a missing user is refused", async () => {
    await expect(
      db().session.create({ data: { tokenHash: "orphan", userId: "no-such-user", expires: new Date() } }),
    ).rejects.toMatchObject({ code: "P2003" });
    expect(await db().session.count()).toBe(0);
  });

  test("an interactive transaction that throws leaves no rows behind", async () => {
    const failure = db().$transaction(async (tx) => {
      const u = await tx.user.create({ data: { email: "tx@example.com" } });
      await tx.account.create({ data: { userId: u.id, type: "oidc", provider: "oidc", providerAccountId: "tx" } });
      await tx.session.create({ data: { tokenHash: "tx", userId: u.id, expires: new Date() } });
      throw new Error("changed my mind");
    });
    await expect(failure).rejects.toThrow("changed my mind");
    expect(await db().user.count()).toBe(0);
    expect(await db().account.count()).toBe(0);
    expect(await db().session.count()).toBe(0);
  });

  test("a unique violation inside an interactive transaction rolls back what the transaction wrote before it", async () => {
    await user("taken@example.com");
    const failure = db().$transaction(async (tx) => {
      await tx.user.create({ data: { email: "new@example.com" } });
      await tx.user.create({ data: { email: "taken@example.com" } });
    });
    await uniqueViolation(failure);
    expect((await db().user.findMany()).map((u) => u.email)).toEqual(["taken@example.com"]);
  });

  test("a committed interactive transaction keeps all its rows", async () => {
    const id = await db().$transaction(async (tx) => {
      const u = await tx.user.create({ data: { email: "ok@example.com" } });
      await tx.password.create({ data: { userId: u.id, hash: "h" } });
      return u.id;
    });
    expect(await db().password.findUnique({ where: { userId: id } })).not.toBeNull();
  });

  test("Organization and its rows: unique slug, one membership per user, one invitation per token, one verified owner per domain; deleting cascades and a session's organization is cleared", async () => {
    const ada = await user();
    const org = await db().organization.create({ data: { name: "Acme", slug: "acme" } });
    await uniqueViolation(db().organization.create({ data: { name: "Other", slug: "acme" } }));
    const membership = await db().membership.create({ data: { organizationId: org.id, userId: ada.id } });
    expect(membership.role).toBe("member");
    await uniqueViolation(db().membership.create({ data: { organizationId: org.id, userId: ada.id, role: "owner" } }));
    const invitation = await db().invitation.create({ data: { organizationId: org.id, email: "bob@example.com", tokenHash: "hash-1", expires: new Date(Date.now() + 1000) } });
    expect(invitation).toMatchObject({ role: "member", sendCount: 1, acceptedAt: null, revokedAt: null });
    await uniqueViolation(db().invitation.create({ data: { organizationId: org.id, email: "cy@example.com", tokenHash: "hash-1", expires: new Date() } }));
    const other = await db().organization.create({ data: { name: "Squatter", slug: "squatter" } });
    // Any number of organizations may claim a domain; one may hold it verified.
    await db().organizationDomain.create({ data: { organizationId: other.id, domain: "acme.example", verificationToken: "s" } });
    const domain = await db().organizationDomain.create({ data: { organizationId: org.id, domain: "acme.example", verificationToken: "a", state: "verified", verifiedDomain: "acme.example" } });
    expect(domain.state).toBe("verified");
    await uniqueViolation(db().organizationDomain.update({ where: { organizationId_domain: { organizationId: other.id, domain: "acme.example" } }, data: { verifiedDomain: "acme.example" } }));
    await uniqueViolation(db().organizationDomain.create({ data: { organizationId: org.id, domain: "acme.example", verificationToken: "b" } }));
    await db().organizationAuditEvent.create({ data: { organizationId: org.id, actorId: "gone-user", type: "organization-created", detail: "{}" } });
    const session = await db().session.create({ data: { userId: ada.id, expires: new Date(Date.now() + 60_000), organizationId: org.id } });

    await db().organization.delete({ where: { id: org.id } });
    expect(await db().membership.count()).toBe(0);
    expect(await db().invitation.count()).toBe(0);
    expect(await db().organizationDomain.count()).toBe(1);
    expect(await db().organizationAuditEvent.count()).toBe(0);
    expect((await db().session.findUniqueOrThrow({ where: { id: session.id } })).organizationId).toBeNull();

    // Deleting a user deletes their memberships, never the organization.
    await db().membership.create({ data: { organizationId: other.id, userId: ada.id, role: "owner" } });
    await db().user.delete({ where: { id: ada.id } });
    expect(await db().membership.count()).toBe(0);
    expect(await db().organization.count()).toBe(1);
  });

  test("OAuthPayload: one row per (kind, id); the same id may be used by two kinds", async () => {
    await db().oAuthPayload.create({ data: { kind: "RefreshToken", id: "t1", payload: "{}", grantId: "g1" } });
    await db().oAuthPayload.create({ data: { kind: "AccessToken", id: "t1", payload: "{}", grantId: "g1" } });
    await uniqueViolation(db().oAuthPayload.create({ data: { kind: "RefreshToken", id: "t1", payload: "{}" } }));
    expect(await db().oAuthPayload.count({ where: { grantId: "g1" } })).toBe(2);
    const consumed = await db().oAuthPayload.updateMany({ where: { kind: "RefreshToken", id: "t1", consumedAt: null }, data: { consumedAt: new Date() } });
    const again = await db().oAuthPayload.updateMany({ where: { kind: "RefreshToken", id: "t1", consumedAt: null }, data: { consumedAt: new Date() } });
    expect([consumed.count, again.count]).toEqual([1, 0]);
  });

  test("OAuthClient and OAuthSigningKey: keyed by client id and kid", async () => {
    await db().oAuthClient.create({ data: { clientId: "c1", name: "App", metadata: "{}", source: "cli" } });
    await uniqueViolation(db().oAuthClient.create({ data: { clientId: "c1", name: "Other", metadata: "{}", source: "admin" } }));
    expect((await db().oAuthClient.findUniqueOrThrow({ where: { clientId: "c1" } })).firstParty).toBe(false);
    await db().oAuthSigningKey.create({ data: { kid: "k1", alg: "RS256", privateJwk: "sealed", activeFrom: new Date() } });
    await uniqueViolation(db().oAuthSigningKey.create({ data: { kid: "k1", alg: "ES256", privateJwk: "sealed", activeFrom: new Date() } }));
  });

  test("SCIM rows: a token hash is unique; a userName and an account are unique per organization only; deleting the organization or the account cascades", async () => {
    const ada = await user();
    const a = await db().organization.create({ data: { name: "A", slug: "org-a" } });
    const b = await db().organization.create({ data: { name: "B", slug: "org-b" } });
    await db().scimToken.create({ data: { organizationId: a.id, name: "Okta", tokenHash: "h1" } });
    await uniqueViolation(db().scimToken.create({ data: { organizationId: b.id, name: "Okta", tokenHash: "h1" } }));
    const inA = await db().scimUser.create({ data: { organizationId: a.id, userId: ada.id, userName: "jdoe", userNameKey: "jdoe", resource: "{}" } });
    expect(inA.active).toBe(true);
    await uniqueViolation(db().scimUser.create({ data: { organizationId: a.id, userId: ada.id, userName: "other", userNameKey: "other", resource: "{}" } }));
    const bob = await db().user.create({ data: { email: "bob@example.com" } });
    await uniqueViolation(db().scimUser.create({ data: { organizationId: a.id, userId: bob.id, userName: "JDOE", userNameKey: "jdoe", resource: "{}" } }));
    // Another organization may use the same userName: no conflict across organizations.
    await db().scimUser.create({ data: { organizationId: b.id, userId: ada.id, userName: "jdoe", userNameKey: "jdoe", resource: "{}" } });
    const group = await db().scimGroup.create({ data: { organizationId: a.id, displayName: "Admins", role: "admin" } });
    await db().scimGroupMember.create({ data: { groupId: group.id, scimUserId: inA.id } });
    await uniqueViolation(db().scimGroupMember.create({ data: { groupId: group.id, scimUserId: inA.id } }));

    await db().organization.delete({ where: { id: a.id } });
    expect(await db().scimToken.count()).toBe(0);
    expect(await db().scimGroup.count()).toBe(0);
    expect(await db().scimGroupMember.count()).toBe(0);
    expect(await db().scimUser.count()).toBe(1);
    await db().user.delete({ where: { id: ada.id } });
    expect(await db().scimUser.count()).toBe(0);
  });

  test("resetDatabase() empties every table", async () => {
    const ada = await user();
    await db().account.create({ data: { userId: ada.id, type: "oauth", provider: "github", providerAccountId: "1" } });
    await db().session.create({ data: { tokenHash: "s", userId: ada.id, expires: new Date() } });
    await db().password.create({ data: { userId: ada.id, hash: "h" } });
    await db().authEvent.create({ data: { type: "x", userId: ada.id } });
    await db().verificationToken.create({ data: { identifier: "a", tokenHash: "t", expires: new Date() } });
    await db().limitCounter.create({ data: { key: "k", points: 1 } });
    await db().sessionCutoff.create({ data: { userId: ada.id, notBefore: new Date(), expires: new Date() } });
    await db().passkey.create({ data: { userId: ada.id, credentialId: "c", publicKey: "p", counter: 0n, deviceType: "singleDevice", name: "Passkey" } });
    await db().passkeyChallenge.create({ data: { challengeHash: "h", expires: new Date() } });
    await db().twoFactorCredential.create({ data: { userId: ada.id, secretSealed: "sealed" } });
    await db().recoveryCode.create({ data: { userId: ada.id, hash: "h" } });
    await db().sessionRevocation.create({ data: { sessionId: "gone", revokedAt: new Date(), expires: new Date() } });
    await db().mailQueue.create({ data: { recipient: "a@example.com", kind: "password-changed", payload: "{}" } });
    await db().globalSessionCutoff.create({ data: { id: "all", notBefore: new Date(), expires: new Date() } });
    await db().sessionOrphanCutoff.create({ data: { userId: ada.id, notBefore: new Date(), expires: new Date() } });
    const org = await db().organization.create({ data: { name: "Acme", slug: "acme" } });
    await db().membership.create({ data: { organizationId: org.id, userId: ada.id, role: "owner" } });
    await db().invitation.create({ data: { organizationId: org.id, email: "b@example.com", tokenHash: "t", expires: new Date() } });
    await db().organizationDomain.create({ data: { organizationId: org.id, domain: "acme.example", verificationToken: "v" } });
    await db().organizationAuditEvent.create({ data: { organizationId: org.id, type: "organization-created" } });
    await db().oAuthSigningKey.create({ data: { kid: "k1", alg: "RS256", privateJwk: "sealed", activeFrom: new Date() } });
    await db().oAuthPayload.create({ data: { kind: "Grant", id: "g1", payload: "{}", accountId: ada.id } });
    await db().oAuthClient.create({ data: { clientId: "c1", name: "App", metadata: "{}", source: "cli" } });
    await db().oAuthSessionApp.create({ data: { sessionId: "s1", userId: ada.id, clientId: "c1", sub: ada.id, sid: "sid", engineSessionUid: "u", expiresAt: new Date() } });
    await db().backchannelLogout.create({ data: { clientId: "c1", userId: ada.id, sub: ada.id, sid: "sid" } });
    await db().oAuthPairwiseSubject.create({ data: { sub: "p1", sector: "app.example.com", userId: ada.id } });
    await db().scimToken.create({ data: { organizationId: org.id, name: "Okta", tokenHash: "scim-hash" } });
    const scimUser = await db().scimUser.create({ data: { organizationId: org.id, userId: ada.id, userName: "Ada@acme.example", userNameKey: "ada@acme.example", resource: "{}" } });
    const scimGroup = await db().scimGroup.create({ data: { organizationId: org.id, displayName: "Admins", role: "admin" } });
    await db().scimGroupMember.create({ data: { groupId: scimGroup.id, scimUserId: scimUser.id } });
    const saml = await db().samlConnection.create({
      data: { organizationId: org.id, idpEntityId: "https://idp.example", ssoUrl: "https://idp.example/sso", certificates: "[]", domains: "acme.example" },
    });
    await db().samlIdentity.create({ data: { connectionId: saml.id, subject: "ada", userId: ada.id } });
    await db().samlRequest.create({ data: { id: "_r", connectionId: saml.id, callbackUrl: "/", expires: new Date() } });
    await db().samlAssertionUse.create({ data: { id: "_a", connectionId: saml.id, expires: new Date() } });
    await db().samlTicket.create({ data: { id: "t", connectionId: saml.id, requestId: "_r", bindingHash: "b", callbackUrl: "/", person: "{}", expires: new Date() } });
    const oidc = await db().oidcConnection.create({
      data: { organizationId: org.id, issuer: "https://idp.example", clientId: "c", clientSecretSealed: "s", domains: "acme.example" },
    });
    await db().oidcIdentity.create({ data: { connectionId: oidc.id, subject: "ada", userId: ada.id } });

    await resetDatabase();

    const counts = await Promise.all([
      db().user.count(),
      db().account.count(),
      db().session.count(),
      db().password.count(),
      db().authEvent.count(),
      db().verificationToken.count(),
      db().limitCounter.count(),
      db().sessionCutoff.count(),
      db().passkey.count(),
      db().passkeyChallenge.count(),
      db().twoFactorCredential.count(),
      db().recoveryCode.count(),
      db().sessionRevocation.count(),
      db().mailQueue.count(),
      db().globalSessionCutoff.count(),
      db().sessionOrphanCutoff.count(),
      db().organization.count(),
      db().membership.count(),
      db().invitation.count(),
      db().organizationDomain.count(),
      db().organizationAuditEvent.count(),
      db().oAuthSigningKey.count(),
      db().oAuthPayload.count(),
      db().oAuthClient.count(),
      db().oAuthSessionApp.count(),
      db().backchannelLogout.count(),
      db().oAuthPairwiseSubject.count(),
      db().scimToken.count(),
      db().scimUser.count(),
      db().scimGroup.count(),
      db().scimGroupMember.count(),
      db().samlConnection.count(),
      db().samlIdentity.count(),
      db().samlRequest.count(),
      db().samlAssertionUse.count(),
      db().samlTicket.count(),
      db().oidcConnection.count(),
      db().oidcIdentity.count(),
    ]);
    expect(counts).toEqual(counts.map(() => 0));
    expect(Object.values(Prisma.ModelName)).toHaveLength(counts.length);
  });
});
