// PostgreSQL LISTEN/NOTIFY (docs/decisions/067). A listener needs a connection of its own for as
// long as it listens — a pooled one goes back to the pool and its LISTEN with it — so each
// subscription holds one dedicated client, outside DATABASE_POOL_MAX, and reconnects by itself
// after the database restarts or the connection drops (backoff from 50 ms to 5 s). A caller learns
// of every (re)connection through `onConnected`, to re-read what it may have missed meanwhile:
// NOTIFY is not queued for a listener that is not connected. SQLite has no such thing: one process.
import pg from "pg";
import { getConfig } from "../auth/core/config.server.ts";
import { dbProvider, rawDriver } from "./client.server.ts";

/** How the listening connections show in pg_stat_activity (the reconnect test finds them by it). */
export const LISTENER_APPLICATION_NAME = "vestibule-listener";
const RECONNECT_FIRST_MS = 50;
const RECONNECT_MAX_MS = 5_000;

export type Subscription = {
  /** Whether the LISTEN is in place right now. */
  connected: () => boolean;
  stop: () => Promise<void>;
};

export type SubscriptionHandlers = {
  onMessage: (payload: string) => void;
  /** After every successful LISTEN, the first included. */
  onConnected: (reconnected: boolean) => void;
  /** The connection failed or was lost; called once per outage. */
  onLost: (error: unknown) => void;
};

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** LISTENs on `channel` over a dedicated connection, kept up until stop(); null on SQLite. */
export function subscribe(channel: string, handlers: SubscriptionHandlers): Subscription | null {
  if (dbProvider() !== "postgres") return null;
  const { databaseUrl, databaseTimeoutMs } = getConfig();
  let current: pg.Client | null = null;
  let stopped = false;
  let everConnected = false;
  let outage = false;
  let delay = RECONNECT_FIRST_MS;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const retry = (client: pg.Client, error: unknown) => {
    if (current === client) current = null;
    client.removeAllListeners("notification");
    void client.end().catch(() => {});
    if (stopped || timer) return;
    if (!outage) {
      outage = true;
      handlers.onLost(error);
    }
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, delay);
    timer.unref();
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  };

  const connect = async () => {
    if (stopped) return;
    const client = new pg.Client({
      // Named in the URL itself: pg lets the URL's parameters win over the options, and an
      // operator's application_name there would otherwise count this connection as the pool's.
      connectionString: listenerUrl(databaseUrl!),
      connectionTimeoutMillis: databaseTimeoutMs,
      query_timeout: databaseTimeoutMs,
      // A connection that died without a word (a network cut) shows within about a minute; the
      // poll covers revocations meanwhile.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    let failed = false;
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      retry(client, error);
    };
    client.on("error", fail);
    client.on("end", () => fail(new Error("connection ended")));
    client.on("notification", (message) => {
      if (message.channel === channel) handlers.onMessage(message.payload ?? "");
    });
    try {
      await client.connect();
      // The listening socket must not keep a process alive that has nothing else to do (scripts, tests).
      (client as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
      await client.query(`LISTEN ${quoteIdentifier(channel)}`);
    } catch (error) {
      fail(error);
      return;
    }
    if (failed || stopped) {
      void client.end().catch(() => {});
      return;
    }
    current = client;
    delay = RECONNECT_FIRST_MS;
    outage = false;
    const reconnected = everConnected;
    everConnected = true;
    handlers.onConnected(reconnected);
  };

  void connect();
  return {
    connected: () => current !== null,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      const client = current;
      current = null;
      await client?.end().catch(() => {});
    },
  };
}

/** NOTIFY `channel` with `payload` (at most 8 000 bytes) through the app's pool; delivered at once (no transaction). */
export async function publish(channel: string, payload: string): Promise<void> {
  if (dbProvider() !== "postgres") return;
  const driver = rawDriver();
  if (driver.provider !== "postgres") return;
  await driver.pool.query("SELECT pg_notify($1, $2)", [channel, payload]);
}

/** The database URL with this connection's own application_name, whatever the URL named. */
function listenerUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set("application_name", LISTENER_APPLICATION_NAME);
  return url.toString();
}
