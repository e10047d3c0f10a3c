// A real SMTP server on loopback (the `smtp-server` package) that keeps what it receives, and the
// MIME decoding needed to read it back (there is no mail parser among the dependencies): unfolded
// headers, RFC 2047 encoded words, multipart bodies, quoted-printable and base64.
//
// Behaviours for the failure tests: `reject` answers RCPT TO or DATA with an error, `refusedUrl()`
// is a port nobody listens on, `startSilentServer()` accepts connections and never greets.
import { createServer, type Server, type Socket } from "node:net";
import { SMTPServer } from "smtp-server";

export type MimePart = {
  headers: Map<string, string>;
  contentType: string;
  /** Decoded body of a leaf part ("" for a multipart container). */
  body: string;
  parts: MimePart[];
};

export type ReceivedMessage = {
  envelope: { from: string; to: string[] };
  raw: string;
  headers: Map<string, string>;
  subject: string;
  /** The To: header as received (decoded). */
  to: string;
  from: string;
  text: string | null;
  html: string | null;
};

export type SmtpSink = {
  url: string;
  port: number;
  messages: ReceivedMessage[];
  /** Make the next transactions fail at this step, with this SMTP reply code. */
  reject: (step: "rcpt" | "data" | null, code?: number) => void;
  /** Resolves when `count` messages have arrived (or rejects after `timeoutMs`). */
  waitFor: (count: number, timeoutMs?: number) => Promise<ReceivedMessage[]>;
  clear: () => void;
  close: () => Promise<void>;
};

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ReceivedMessage[] = [];
  let failure: { step: "rcpt" | "data"; code: number } | null = null;
  const waiters = new Set<() => void>();

  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    size: 1024 * 1024,
    onRcptTo(address, _session, callback) {
      if (failure?.step === "rcpt") {
        const error = Object.assign(new Error("Mailbox unavailable"), { responseCode: failure.code });
        return callback(error);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (failure?.step === "data") {
          return callback(Object.assign(new Error("Temporary failure"), { responseCode: failure.code }));
        }
        const raw = Buffer.concat(chunks).toString("utf8");
        const envelope = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
        };
        messages.push(readMessage(raw, envelope));
        for (const wake of waiters) wake();
        callback();
      });
    },
  });
  server.on("error", () => {});
  const port = await new Promise<number>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve((server.server.address() as { port: number }).port));
  });

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    reject: (step, code = step === "rcpt" ? 550 : 451) => {
      failure = step ? { step, code } : null;
    },
    waitFor: (count, timeoutMs = 5_000) =>
      new Promise((resolve, reject) => {
        if (messages.length >= count) return resolve(messages);
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} message(s), got ${messages.length} within ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          if (messages.length >= count) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(messages);
          }
        };
        waiters.add(check);
      }),
    clear: () => {
      messages.length = 0;
      failure = null;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A loopback URL where nothing listens: connecting is refused at once. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  const port = await new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `smtp://127.0.0.1:${port}`;
}

/** Accepts TCP connections and never says a word (no 220 greeting), like a hung server. */
export async function startSilentServer(): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  const port = await new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
  return {
    url: `smtp://127.0.0.1:${port}`,
    connections: () => count,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---- MIME -----------------------------------------------------------------------------------

function splitHead(raw: string): { head: string; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  if (at < 0) return { head: raw, body: "" };
  const sep = raw.slice(at).match(/^\r?\n\r?\n/)![0];
  return { head: raw.slice(0, at), body: raw.slice(at + sep.length) };
}

/** Header names lower-cased; folded lines joined; repeated headers joined with ", ". */
export function parseHeaders(head: string): Map<string, string> {
  const headers = new Map<string, string>();
  const unfolded = head.replace(/\r?\n[ \t]+/g, " ");
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = decodeWords(line.slice(colon + 1).trim());
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  }
  return headers;
}

/** RFC 2047 encoded words, UTF-8 only (what nodemailer writes); adjacent words join without space. */
export function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[bBqQ]\?[^?]*\?=)\s+(?==\?)/g, "$1")
    .replace(/=\?([^?]+)\?([bBqQ])\?([^?]*)\?=/g, (_m, _charset: string, enc: string, text: string) => {
      if (enc.toUpperCase() === "B") return Buffer.from(text, "base64").toString("utf8");
      const bytes = text.replace(/_/g, " ").replace(/=([0-9A-Fa-f]{2})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16)));
      return Buffer.from(bytes, "latin1").toString("utf8");
    });
}

export function decodeQuotedPrintable(body: string): string {
  const bytes = body
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, "latin1").toString("utf8");
}

function param(headerValue: string, name: string): string | null {
  const m = new RegExp(`;\\s*${name}="?([^";]+)"?`, "i").exec(headerValue);
  return m ? m[1]! : null;
}

export function parsePart(raw: string): MimePart {
  const { head, body } = splitHead(raw);
  const headers = parseHeaders(head);
  const typeHeader = headers.get("content-type") ?? "text/plain";
  const contentType = typeHeader.split(";")[0]!.trim().toLowerCase();
  if (contentType.startsWith("multipart/")) {
    const boundary = param(typeHeader, "boundary");
    if (!boundary) return { headers, contentType, body: "", parts: [] };
    const sections = body.split(new RegExp(`\\r?\\n?--${boundary.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:--)?[ \\t]*\\r?\\n?`));
    // sections[0] is the preamble, the last one the epilogue.
    const parts = sections.slice(1, -1).filter((s) => s.trim() !== "").map(parsePart);
    return { headers, contentType, body: "", parts };
  }
  const encoding = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  const decoded =
    encoding === "quoted-printable"
      ? decodeQuotedPrintable(body)
      : encoding === "base64"
        ? Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8")
        : body;
  return { headers, contentType, body: decoded.replace(/\r\n/g, "\n"), parts: [] };
}

function findPart(part: MimePart, type: string): MimePart | null {
  if (part.contentType === type) return part;
  for (const p of part.parts) {
    const found = findPart(p, type);
    if (found) return found;
  }
  return null;
}

export function readMessage(raw: string, envelope: { from: string; to: string[] }): ReceivedMessage {
  const root = parsePart(raw);
  return {
    envelope,
    raw,
    headers: root.headers,
    subject: root.headers.get("subject") ?? "",
    to: root.headers.get("to") ?? "",
    from: root.headers.get("from") ?? "",
    text: findPart(root, "text/plain")?.body ?? null,
    html: findPart(root, "text/html")?.body ?? null,
  };
}

/** The first sign-in/confirmation link in the plain-text part. */
export function linkIn(message: ReceivedMessage): URL {
  const m = /https?:\/\/\S+/.exec(message.text ?? "");
  if (!m) throw new Error(`no link in the message's text part:\n${message.text}`);
  return new URL(m[0]);
}

/** A security e-mail (ADR 059, 081): every one carries its own "This wasn't me" link. */
export function isSecurityNotice(message: ReceivedMessage): boolean {
  return /\/auth\/wasnt-me\?/.test(message.text ?? "");
}

/**
 * The first `count` messages that are not security e-mails, once they have arrived: a sign-in from
 * a browser without the account's device cookie, a password change and the like also send the
 * owner a notice, in between the messages a test asked for.
 */
export async function waitForMessages(sink: SmtpSink, count: number, timeoutMs?: number): Promise<ReceivedMessage[]> {
  let total = count;
  for (;;) {
    const others = (await sink.waitFor(total, timeoutMs)).filter((m) => !isSecurityNotice(m));
    if (others.length >= count) return others;
    total += count - others.length;
  }
}
