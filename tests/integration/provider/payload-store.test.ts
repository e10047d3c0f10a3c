// The OAuth engine's hot rows written and read on the driver (payload-store.server.ts, no ORM):
// what it writes is what the ORM reads and the other way round (times included, on both
// databases), and the consume is one conditional update that exactly one caller wins.
import { beforeEach, describe, expect, it } from "vitest";
import { consumePayload, findAccountRow, findClientRow, findPayload, releaseConsumed, ROWS_PER_UPSERT, upsertPayload, upsertPayloads } from "../../../app/auth/provider/payload-store.server";
import { rawWriter, SQLITE_CHECKPOINT_PAGES, SQLITE_WAL_KEPT_BYTES } from "../../../app/db/client.server";
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

  it("several rows are one statement: all are written, as the ORM reads them, or none; a row named twice is written once, as last given", async () => {
    const expiresAt = new Date(Date.now() + 30_000);
    const columns = { grantId: "g1", uid: null, userCode: null, accountId: "u1", clientId: "c1", expiresAt };
    await upsertPayloads([
      { kind: "AccessToken", id: "a1", columns: { ...columns, payload: '{"at":1}' } },
      { kind: "RefreshToken", id: "r1", columns: { ...columns, payload: '{"rt":1}' } },
      { kind: "RefreshAnswer", id: "r0", columns: { ...columns, accountId: null, payload: "sealed" } },
      { kind: "AccessToken", id: "a1", columns: { ...columns, payload: '{"at":2}' } },
    ]);
    expect(await row("AccessToken", "a1")).toMatchObject({ payload: '{"at":2}', grantId: "g1", accountId: "u1", clientId: "c1", expiresAt });
    expect(await row("RefreshToken", "r1")).toMatchObject({ payload: '{"rt":1}', consumedAt: null });
    expect(await row("RefreshAnswer", "r0")).toMatchObject({ payload: "sealed", accountId: null, expiresAt });
    // One row the database refuses (no payload): none of the others is written either.
    await expect(
      upsertPayloads([
        { kind: "AccessToken", id: "a2", columns: { ...columns, payload: "{}" } },
        { kind: "RefreshToken", id: "r2", columns: { ...columns, payload: null as unknown as string } },
      ]),
    ).rejects.toThrow();
    expect(await testDb().oAuthPayload.count({ where: { id: { in: ["a2", "r2"] } } })).toBe(0);
    await upsertPayloads([]);
    const many = Array.from({ length: ROWS_PER_UPSERT + 1 }, (_, i) => ({ kind: "AccessToken", id: `m${i}`, columns: { ...columns, payload: "{}" } }));
    await expect(upsertPayloads(many)).rejects.toThrow(/at most/);
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

  it("the lookup-only columns' indexes (uid, userCode, accountId) hold only the rows that have one, and a lookup by value still uses them", async () => {
    const names = ["OAuthPayload_uid_idx", "OAuthPayload_userCode_idx", "OAuthPayload_accountId_idx"];
    if (dbLabel === "postgres") {
      const rows = await testDb().$queryRawUnsafe<{ indexname: string; indexdef: string }[]>(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'OAuthPayload'`);
      for (const name of names) expect(rows.find((r) => r.indexname === name)?.indexdef, name).toMatch(/WHERE \("?\w+"? IS NOT NULL\)$/);
      return;
    }
    const list = await testDb().$queryRawUnsafe<{ name: string; partial: bigint | number }[]>(`PRAGMA index_list("OAuthPayload")`);
    for (const name of names) expect(Number(list.find((r) => r.name === name)?.partial), name).toBe(1);
    for (const [column, index] of [["uid", names[0]], ["userCode", names[1]], ["accountId", names[2]]] as const) {
      const plan = await testDb().$queryRawUnsafe<{ detail: string }[]>(`EXPLAIN QUERY PLAN SELECT "id" FROM "OAuthPayload" WHERE "kind" = 'Grant' AND "${column}" = 'x'`);
      expect(plan.map((p) => p.detail).join("; "), column).toContain(index);
    }
  });

  it.runIf(dbLabel === "sqlite")("the writing connection checkpoints its WAL every SQLITE_CHECKPOINT_PAGES pages and cuts it back to SQLITE_WAL_KEPT_BYTES", async () => {
    const driver = await rawWriter();
    if (driver.provider !== "sqlite") throw new Error("SQLite expected");
    expect(Number(driver.sqlite.pragma("wal_autocheckpoint", { simple: true }))).toBe(SQLITE_CHECKPOINT_PAGES);
    expect(Number(driver.sqlite.pragma("journal_size_limit", { simple: true }))).toBe(SQLITE_WAL_KEPT_BYTES);
    expect(driver.sqlite.pragma("journal_mode", { simple: true })).toBe("wal");
  });

  it("a consume and a token answer's write during another request's open transaction are not part of it: that transaction's rollback undoes neither", async () => {
    const expiresAt = new Date(Date.now() + 60_000);
    const columns = { grantId: "g1", uid: null, userCode: null, accountId: "u1", clientId: "c1", expiresAt };
    await upsertPayload("RefreshToken", "t5", { ...columns, payload: "{}" });
    const at = new Date();
    let consumed: Promise<boolean> | undefined;
    let written: Promise<void> | undefined;
    await expect(
      testDb().$transaction(async (tx) => {
        await tx.oAuthPayload.count();
        consumed = consumePayload("RefreshToken", "t5", at);
        written = upsertPayloads([{ kind: "AccessToken", id: "a5", columns: { ...columns, payload: "{}" } }]);
        // On SQLite (one connection) neither has happened inside the open transaction: they wait
        // for it to end. PostgreSQL's run on another connection of the pool, committed at once.
        if (dbLabel === "sqlite") {
          expect((await tx.oAuthPayload.findUniqueOrThrow({ where: { kind_id: { kind: "RefreshToken", id: "t5" } } })).consumedAt).toBeNull();
          expect(await tx.oAuthPayload.count({ where: { kind: "AccessToken", id: "a5" } })).toBe(0);
        }
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await consumed).toBe(true);
    await written;
    expect((await row("RefreshToken", "t5")).consumedAt!.getTime()).toBe(at.getTime());
    expect(await row("AccessToken", "a5")).toMatchObject({ grantId: "g1" });
  });

  it("a released row is unconsumed again, and can be consumed once more", async () => {
    await upsertPayload("RefreshToken", "t6", { payload: "{}", grantId: null, uid: null, userCode: null, accountId: null, clientId: null, expiresAt: null });
    expect(await consumePayload("RefreshToken", "t6", new Date())).toBe(true);
    await releaseConsumed("RefreshToken", "t6");
    expect((await row("RefreshToken", "t6")).consumedAt).toBeNull();
    expect(await consumePayload("RefreshToken", "t6", new Date())).toBe(true);
    expect(await consumePayload("RefreshToken", "t6", new Date())).toBe(false);
  });
});
