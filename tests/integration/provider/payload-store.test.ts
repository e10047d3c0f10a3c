// The OAuth engine's hot rows written and read on the driver (payload-store.server.ts, no ORM):
// what it writes is what the ORM reads and the other way round (times included, on both
// databases), and the consume is one conditional update that exactly one caller wins.
import { beforeEach, describe, expect, it } from "vitest";
import { consumePayload, findAccountRow, findClientRow, findPayload, insertPayload, upsertPayload } from "../../../app/auth/provider/payload-store.server";
import { dbLabel, resetDatabase, testDb } from "../../support/db";

const row = (kind: string, id: string) => testDb().oAuthPayload.findUniqueOrThrow({ where: { kind_id: { kind, id } } });

describe(`OAuth payload rows on the driver (${dbLabel})`, () => {
  beforeEach(resetDatabase);

  it("an upsert writes the row the ORM reads, and a second one replaces its columns but not its creation time", async () => {
    const expiresAt = new Date(Date.now() + 60_000);
    const before = Date.now();
    await upsertPayload("RefreshToken", "t1", { payload: '{"a":1}', grantId: "g1", uid: null, userCode: null, accountId: "u1", clientId: "c1", expiresAt });
    const first = await row("RefreshToken", "t1");
    expect(first).toMatchObject({ payload: '{"a":1}', grantId: "g1", uid: null, userCode: null, accountId: "u1", clientId: "c1", consumedAt: null });
    expect(first.expiresAt!.getTime()).toBe(expiresAt.getTime());
    expect(first.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1);
    await upsertPayload("RefreshToken", "t1", { payload: '{"a":2}', grantId: "g2", uid: "x", userCode: null, accountId: null, clientId: "c1", expiresAt: null });
    const second = await row("RefreshToken", "t1");
    expect(second).toMatchObject({ payload: '{"a":2}', grantId: "g2", uid: "x", accountId: null, expiresAt: null });
    expect(second.createdAt.getTime()).toBe(first.createdAt.getTime());
  });

  it("a find reads what the ORM wrote, its consumption time to the millisecond; an unknown row is null", async () => {
    const consumedAt = new Date(Date.now() - 31_000);
    await testDb().oAuthPayload.create({ data: { kind: "RefreshToken", id: "t2", payload: "{}", consumedAt } });
    await testDb().oAuthPayload.create({ data: { kind: "Grant", id: "g3", payload: '{"g":1}' } });
    expect(await findPayload("RefreshToken", "t2")).toEqual({ payload: "{}", consumedAt });
    expect(await findPayload("Grant", "g3")).toEqual({ payload: '{"g":1}', consumedAt: null });
    expect(await findPayload("Grant", "t2")).toBeNull();
  });

  it("of several consumes at once exactly one wins, and the time it wrote is the ORM's", async () => {
    await upsertPayload("RefreshToken", "t3", { payload: "{}", grantId: null, uid: null, userCode: null, accountId: null, clientId: null, expiresAt: null });
    const at = new Date();
    const won = await Promise.all(Array.from({ length: 5 }, () => consumePayload("RefreshToken", "t3", at)));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect((await row("RefreshToken", "t3")).consumedAt!.getTime()).toBe(at.getTime());
    expect((await findPayload("RefreshToken", "t3"))!.consumedAt!.getTime()).toBe(at.getTime());
    expect(await consumePayload("RefreshToken", "missing", at)).toBe(false);
  });

  it("an insert refuses a row that is there (a kept refresh answer is written once)", async () => {
    const expiresAt = new Date(Date.now() + 30_000);
    await insertPayload("RefreshAnswer", "t4", { payload: "sealed", grantId: "g1", clientId: "c1", expiresAt });
    expect(await row("RefreshAnswer", "t4")).toMatchObject({ payload: "sealed", grantId: "g1", clientId: "c1", expiresAt });
    await expect(insertPayload("RefreshAnswer", "t4", { payload: "other", grantId: null, clientId: null, expiresAt })).rejects.toThrow();
    expect((await row("RefreshAnswer", "t4")).payload).toBe("sealed");
  });

  it("a client's row and a user's row read as the ORM wrote them; a disabled or unknown user, an unknown client", async () => {
    await testDb().oAuthClient.create({ data: { clientId: "c1", name: "App", metadata: '{"m":1}', secretSealed: null, source: "cli" } });
    await testDb().oAuthClient.create({ data: { clientId: "c2", name: "App 2", metadata: "{}", secretSealed: "sealed", source: "admin" } });
    expect(await findClientRow("c1")).toEqual({ metadata: '{"m":1}', secretSealed: null });
    expect(await findClientRow("c2")).toEqual({ metadata: "{}", secretSealed: "sealed" });
    expect(await findClientRow("c3")).toBeNull();
    await testDb().user.create({ data: { id: "u1", email: "a@example.com", emailVerified: new Date(), name: "Ann" } });
    await testDb().user.create({ data: { id: "u2", email: null, name: null } });
    await testDb().user.create({ data: { id: "u3", email: "c@example.com", disabledAt: new Date() } });
    expect(await findAccountRow("u1")).toEqual({ email: "a@example.com", emailVerified: true, name: "Ann", disabled: false });
    expect(await findAccountRow("u2")).toEqual({ email: null, emailVerified: false, name: null, disabled: false });
    expect(await findAccountRow("u3")).toMatchObject({ disabled: true });
    expect(await findAccountRow("u4")).toBeNull();
  });
});
