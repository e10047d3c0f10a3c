// What the tests of a stop signal share (tests/browser/ops-shutdown.test.ts, which starts the
// production build through startApp, and tests/deploy/stop-signal.test.ts, which starts it as
// systemd and npm do): a request held in flight by a body that has not all arrived, an answer
// waited for on a raw socket, and "nobody listens on the port any more".
import type { Socket } from "node:net";
import { openSocket, parseResponse, rawRequest, readAll, type RawResponse } from "./raw-http";

/** Settles once `socket` has received data that contains `text` (an answer's first bytes). */
export function received(socket: Socket, text: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk.toString("latin1");
      if (!seen.includes(text)) return;
      socket.off("data", onData);
      resolve();
    };
    socket.on("data", onData);
  });
}

export type SlowSignIn = {
  socket: Socket;
  /** The raw answer, once the connection ends ("" when the server closes it without one). */
  answer: Promise<string>;
  /** Sends the rest of the body and reads the answer. */
  finish: () => Promise<RawResponse>;
};

/**
 * A JSON-mode credentials sign-in on the server at `port` whose body is sent only in part: the
 * server has read its head ("Expect: 100-continue" makes it say so) and waits for the rest, so the
 * request is in flight — the state a stop signal must meet. Kept alive, as a browser's connection.
 */
export async function slowSignIn(port: number, host = `localhost:${port}`): Promise<SlowSignIn> {
  const csrf = await rawRequest(port, `GET /auth/csrf HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
  const cookie = csrf.headers["set-cookie"]!.split(";")[0]!;
  const body = new URLSearchParams({ csrfToken, email: "nobody@example.com", password: "not-the-password" }).toString();
  const socket = await openSocket(port);
  // The interim "100 Continue" is not part of the answer the test reads.
  const answer = readAll(socket).then((raw) => raw.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, ""));
  const inFlight = received(socket, "100 Continue");
  socket.write(
    `POST /auth/callback/credentials HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
      `X-Auth-Return-Redirect: 1\r\nCookie: ${cookie}\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
  );
  await inFlight;
  return {
    socket,
    answer,
    finish: async () => {
      socket.write(body.slice(10));
      return parseResponse(await answer);
    },
  };
}

/** True once a connection to `port` is refused: nothing listens there any more. */
export async function refused(port: number): Promise<boolean> {
  try {
    (await openSocket(port)).destroy();
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ECONNREFUSED";
  }
}
