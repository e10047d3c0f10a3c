// The apps told when a Vestibule session ends (back-channel logout, ADR 145). The OAuth provider
// records which app got an ID token in which session (OAuthSessionApp); when sessions end, each
// such app gets a BackchannelLogout row, in the same transaction as the end where the caller has
// one, and the provider's sender (provider/backchannel.server.ts) delivers it. By table and
// column, as revokeProviderGrants is: core knows no provider.
import { db } from "../../db/client.server";

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];
type Writer = Tx | ReturnType<typeof db>;

/** How many session ids one query names (SQLite's bound on a statement's parameters is far above). */
const CHUNK = 500;

let waker: (() => void) | null = null;

/** The provider's sender registers itself here: woken after a commit that queued logouts. */
export function onAppLogoutsQueued(wake: (() => void) | null): void {
  waker = wake;
}

/** Wakes this instance's sender (after the commit: a sender woken before could not see the rows). */
export function wakeAppLogouts(): void {
  waker?.();
}

/**
 * The sessions `sessionIds` ended: every app that got an ID token in one of them is queued a
 * logout token, their records go, and so do the provider's own sessions of those browsers (a new
 * sign-in there starts the engine's session, and its `sid`s, afresh). With `continuedAs` the
 * sessions did not end for the apps: a re-authentication renews the session under a new id
 * (renewAuthentication), and the records follow it. Returns how many logouts were queued.
 */
export async function queueAppLogouts(writer: Writer, sessionIds: readonly string[] | "all", { continuedAs = null as string | null } = {}): Promise<number> {
  let queued = 0;
  // "all": every session ended (revokeAllSessions), read a page at a time rather than by id.
  const pages = sessionIds === "all" ? null : sessionIds;
  for (let i = 0; pages === null || i < pages.length; i += CHUNK) {
    const ids = pages?.slice(i, i + CHUNK);
    if (continuedAs && ids) {
      await writer.oAuthSessionApp.updateMany({ where: { sessionId: { in: ids } }, data: { sessionId: continuedAs } });
      continue;
    }
    const links = await writer.oAuthSessionApp.findMany({
      where: ids ? { sessionId: { in: ids } } : {},
      select: { id: true, userId: true, clientId: true, sub: true, sid: true, engineSessionUid: true, idTokenAt: true },
      ...(ids ? {} : { take: CHUNK }),
    });
    if (links.length === 0) {
      if (!ids) break;
      continue;
    }
    const told = links.filter((l) => l.idTokenAt !== null);
    if (told.length) await writer.backchannelLogout.createMany({ data: told.map((l) => ({ clientId: l.clientId, userId: l.userId, sub: l.sub, sid: l.sid })) });
    queued += told.length;
    await writer.oAuthSessionApp.deleteMany({ where: { id: { in: links.map((l) => l.id) } } });
    await writer.oAuthPayload.deleteMany({ where: { kind: "Session", uid: { in: [...new Set(links.map((l) => l.engineSessionUid))] } } });
  }
  return queued;
}
