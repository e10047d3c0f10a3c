// A tiny authoritative DNS server over UDP on 127.0.0.1, for the domain verification tests
// (AUTH_DNS_SERVERS points node:dns at it): it answers TXT questions from a table the test sets,
// NXDOMAIN for names it does not hold, an empty NOERROR for other types, and SERVFAIL while
// `failing` is set. Enough of RFC 1035 for one question per query; no compression beyond the
// answer's pointer to the question's name.
import { createSocket, type Socket } from "node:dgram";

export type DnsServer = {
  /** "127.0.0.1:<port>", as AUTH_DNS_SERVERS takes it. */
  address: string;
  /** Sets the TXT strings of a name (lower case, no trailing dot); an empty list removes the name. */
  setTxt(name: string, values: string[]): void;
  clear(): void;
  /** While true, every query is answered SERVFAIL (a resolver that cannot answer). */
  failing: boolean;
  /** Questions asked so far, as "<name> <type>". */
  asked: string[];
  close(): Promise<void>;
};

const TYPE_TXT = 16;

function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let i = offset;
  while (i < msg.length) {
    const len = msg[i]!;
    if (len === 0) return { name: labels.join(".").toLowerCase(), end: i + 1 };
    labels.push(msg.subarray(i + 1, i + 1 + len).toString("latin1"));
    i += 1 + len;
  }
  throw new Error("truncated name");
}

function txtRdata(values: string[]): Buffer {
  // A TXT record is one or more <length><bytes> strings; long values are split at 255 bytes.
  const parts: Buffer[] = [];
  for (const value of values.length ? values : [""]) {
    const bytes = Buffer.from(value, "utf8");
    for (let i = 0; i === 0 || i < bytes.length; i += 255) {
      const chunk = bytes.subarray(i, i + 255);
      parts.push(Buffer.from([chunk.length]), chunk);
    }
  }
  return Buffer.concat(parts);
}

function answer(query: Buffer, records: Map<string, string[][]>, failing: boolean, asked: string[]): Buffer | null {
  if (query.length < 12) return null;
  const { name, end } = readName(query, 12);
  const type = query.readUInt16BE(end);
  asked.push(`${name} ${type}`);
  const question = query.subarray(12, end + 4);
  const held = records.get(name);
  const rcode = failing ? 2 : held ? 0 : 3;
  const answers = !failing && held && type === TYPE_TXT ? held : [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  const rd = query[2]! & 0x01;
  header[2] = 0x84 | rd; // QR, AA, RD as asked
  header[3] = 0x80 | rcode; // RA, rcode
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  const rrs = answers.map((values) => {
    const rdata = txtRdata(values);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the question's name
    rr.writeUInt16BE(TYPE_TXT, 2);
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, question, ...rrs]);
}

export async function startDnsServer(): Promise<DnsServer> {
  const records = new Map<string, string[][]>();
  const socket: Socket = createSocket("udp4");
  const server: DnsServer = {
    address: "",
    failing: false,
    asked: [],
    setTxt(name, values) {
      const key = name.toLowerCase().replace(/\.$/, "");
      if (values.length) records.set(key, values.map((v) => [v]));
      else records.delete(key);
    },
    clear() {
      records.clear();
      server.asked.length = 0;
      server.failing = false;
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
  socket.on("message", (msg, peer) => {
    let reply: Buffer | null = null;
    try {
      reply = answer(msg, records, server.failing, server.asked);
    } catch {
      reply = null;
    }
    if (reply) socket.send(reply, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  server.address = `127.0.0.1:${socket.address().port}`;
  return server;
}
