// A forward proxy for tests: answers HTTP CONNECT by opening a tunnel to the host it names, and
// records each tunnel's host:port and the request lines that went through it (readable when the
// tunnelled traffic is plain HTTP). Anything but CONNECT is refused with 405 and recorded.
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";

export type RecordingProxy = {
  url: string;
  /** host:port of every CONNECT, in order. */
  tunnels: string[];
  /** "METHOD /path" of the plain-HTTP requests seen inside the tunnels. */
  requests: string[];
  /** Requests that were not CONNECT. */
  refused: string[];
  clear(): void;
  stop(): Promise<void>;
};

export async function startRecordingProxy(): Promise<RecordingProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    proxy.refused.push(`${req.method} ${req.url}`);
    res.writeHead(405).end();
  });
  server.on("connect", (req, client: Socket, head: Buffer) => {
    const target = req.url ?? "";
    proxy.tunnels.push(target);
    const [host, port] = [target.slice(0, target.lastIndexOf(":")).replace(/^\[|\]$/g, ""), Number(target.slice(target.lastIndexOf(":") + 1))];
    const upstream = connect(port, host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      client.on("data", (chunk: Buffer) => {
        const line = /^([A-Z]+) (\S+) HTTP\/1\.[01]\r\n/.exec(chunk.toString("latin1"));
        if (line) proxy.requests.push(`${line[1]} ${line[2]}`);
      });
      client.pipe(upstream).pipe(client);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxy: RecordingProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tunnels: [],
    requests: [],
    refused: [],
    clear() {
      proxy.tunnels.length = 0;
      proxy.requests.length = 0;
      proxy.refused.length = 0;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  return proxy;
}
