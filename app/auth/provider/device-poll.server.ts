// RFC 8628 section 3.5: a device polling the token endpoint faster than its interval is answered
// `slow_down`, and its interval grows by 5 seconds for that device code from then on (ADR 170).
// oidc-provider answers every early poll `authorization_pending` and keeps no poll times, so
// Vestibule keeps them: one OAuthPayload row per device code (kind DevicePoll), in the database so
// that a device whose polls land on two instances is measured the same on both.
//
// The row is changed by compare-and-swap on its payload (an UPDATE … WHERE payload = what was
// read): of two polls of one code arriving at two instances at once, one is counted as the poll
// and the other is too early.
import { db } from "../../db/client.server";
import { tokenRowId } from "./payload-store.server";
import { DEVICE_CODE_TTL, DEVICE_POLL_INTERVAL } from "./lifetimes.server";

const KIND = "DevicePoll";
/** How much the interval grows at each slow_down (RFC 8628 section 3.5). */
export const DEVICE_SLOW_DOWN_STEP = 5;

type PollState = { last: number; interval: number };

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === "P2002";
}

/**
 * Records a poll of `deviceCode` that the engine answered `authorization_pending`, and says
 * whether it came sooner than the code's interval after the previous one: then the answer is
 * `slow_down` and the interval has grown by 5 seconds.
 */
export async function pollTooSoon(deviceCode: string, clientId: string | null, now = Date.now()): Promise<boolean> {
  const client = db();
  // Under the device code's hash, as the code's own row (ADR 177).
  const id = tokenRowId(deviceCode);
  const key = { kind_id: { kind: KIND, id } };
  const row = await client.oAuthPayload.findUnique({ where: key, select: { payload: true } });
  if (!row) {
    const first: PollState = { last: now, interval: DEVICE_POLL_INTERVAL };
    try {
      // Lives no longer than the device code it measures.
      await client.oAuthPayload.create({ data: { kind: KIND, id, clientId, payload: JSON.stringify(first), expiresAt: new Date(now + DEVICE_CODE_TTL * 1000) } });
      return false;
    } catch (error) {
      // Another instance counted a poll of this code this very moment: this one is too early.
      if (isUniqueViolation(error)) return true;
      throw error;
    }
  }
  const state = JSON.parse(row.payload) as PollState;
  const early = now - state.last < state.interval * 1000;
  const next: PollState = { last: now, interval: early ? state.interval + DEVICE_SLOW_DOWN_STEP : state.interval };
  const { count } = await client.oAuthPayload.updateMany({ where: { kind: KIND, id, payload: row.payload }, data: { payload: JSON.stringify(next) } });
  // Lost the swap: another poll of the same code was counted between the read and now.
  return early || count === 0;
}
