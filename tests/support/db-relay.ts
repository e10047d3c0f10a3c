// A TCP relay between a server under test and PostgreSQL (127.0.0.1:5432) that the test can close
// (connections refused, every open one cut), stall (connections accepted and open ones kept, but
// nothing passes either way: a black hole) and restore.
import { connect, createServer, type Server, type Socket } from "node:net";

type Pair = { client: Socket; upstream: Socket | null };

export class DatabaseRelay {
  private server: Server | null = null;
  private pairs = new Set<Pair>();
  /** forward: bytes pass; stall: new and open connections stay open and silent. */
  mode: "forward" | "stall" = "forward";
  constructor(
    readonly port: number,
    readonly target = { host: "127.0.0.1", port: 5432 },
  ) {}

  /** `url` (a postgresql:// URL to the target) rewritten to go through the relay. */
  via(url: string): string {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.href;
  }

  async open() {
    const server = createServer((client) => {
      const pair: Pair = { client, upstream: null };
      this.pairs.add(pair);
      client.on("error", () => {});
      client.on("close", () => {
        pair.upstream?.destroy();
        this.pairs.delete(pair);
      });
      if (this.mode === "stall") return;
      const upstream = connect(this.target);
      pair.upstream = upstream;
      upstream.on("error", () => client.destroy());
      upstream.on("close", () => client.destroy());
      // Not pipe(): a stall must be able to hold bytes on connections already open.
      client.on("data", (chunk) => {
        if (this.mode === "forward") upstream.write(chunk);
      });
      upstream.on("data", (chunk) => {
        if (this.mode === "forward") client.write(chunk);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.server = server;
  }

  /** Open connections go silent (what they send is dropped); new ones are accepted and ignored. */
  stall() {
    this.mode = "stall";
  }

  /**
   * Bytes pass again for new connections. The ones open during the stall lost bytes on the way,
   * so they are cut, as a network that comes back after an outage leaves them.
   */
  restore() {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream?.destroy();
    }
    this.pairs.clear();
    this.mode = "forward";
  }

  /** Closes the port and every connection through it. */
  async close() {
    const server = this.server;
    this.server = null;
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream?.destroy();
    }
    this.pairs.clear();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}
