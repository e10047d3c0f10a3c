// `npm run db:generate` under a running `npm run dev`: the dev server re-evaluates the generated
// client and app/db/client.server.ts, but the open client is kept on globalThis across
// evaluations. db() makes a new one when the held client came from another evaluation of the
// generated client, so a new table's delegate (`db().note`) exists at the next request instead of
// a 500 "Cannot read properties of undefined (reading 'findMany')" until a restart (issue 33).
import { expect, it } from "vitest";
import { db } from "../../../app/db/client.server.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";

type Held = { client: unknown; made: unknown };
const holder = globalThis as typeof globalThis & { [key: symbol]: Held | undefined };
const HELD = Symbol.for("vestibule.db");

it(`keeps the open client while the generated client is the same (${dbLabel})`, async () => {
  await resetDatabase();
  const first = db();
  expect(db()).toBe(first);
  expect(holder[HELD]?.client).toBe(first);
});

it(`replaces a client made from an earlier evaluation of the generated client, and the new one answers (${dbLabel})`, async () => {
  await resetDatabase();
  const before = db();
  // What the dev server leaves behind after db:generate: the held client's class is the old module's.
  holder[HELD]!.made = class EarlierGeneratedClient {};
  const after = db();
  expect(after).not.toBe(before);
  expect(db()).toBe(after);
  expect(await after.user.count()).toBe(0);
});
