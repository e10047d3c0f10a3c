// HTTP/1.1 over a bare TCP socket (node:net): for requests no HTTP client sends — an asterisk or
// absolute-form target, oversized header blocks, a body written slowly — and for reading exactly
// what the server wrote back.
import { connect, type Socket } from "node:net";

export type RawResponse = { status: number; headers: Record<string, string>; body: string; raw: string };

/** Parses the first response in `raw` (status line, headers, the rest as body, chunked decoded). */
export function parseResponse(raw: string): RawResponse {
  const end = raw.indexOf("\r\n\r\n");
  const head = end === -1 ? raw : raw.slice(0, end);
  const [statusLine = "", ...lines] = head.split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = end === -1 ? "" : raw.slice(end + 4);
  if (headers["transfer-encoding"] === "chunked") {
    let decoded = "";
    let rest = body;
    for (;;) {
      const lineEnd = rest.indexOf("\r\n");
      const size = parseInt(rest.slice(0, lineEnd), 16);
      if (!(size > 0)) break;
      decoded += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      rest = rest.slice(lineEnd + 2 + size + 2);
    }
    body = decoded;
  }
  return { status, headers, body, raw };
}

/** Opens a connection; rejects with the socket error (e.g. ECONNREFUSED). */
export function openSocket(port: number, host = "127.0.0.1"): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host });
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/**
 * Everything the server writes on `socket` until it closes the connection. `timeoutMs` only ends
 * a connection the server never closes (then the answer is what arrived); generous, so a loaded
 * machine never cuts an answer short.
 */
export function readAll(socket: Socket, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("latin1"));
    };
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, timeoutMs);
    socket.on("data", (c: Buffer) => chunks.push(c));
    // A reset after the server's answer (it closed while we were still writing) still counts.
    socket.on("error", () => {});
    socket.once("close", done);
  });
}

/** Sends `request` as-is (with `Connection: close` in it) and returns the parsed answer. */
export async function rawRequest(port: number, request: string | Buffer, timeoutMs = 60_000): Promise<RawResponse> {
  const socket = await openSocket(port);
  const answer = readAll(socket, timeoutMs);
  socket.write(request);
  return parseResponse(await answer);
}
