// A second instance of the provider for a test, as its own process on the test's database: it
// starts the engine behind a socket of its own, prints {"ready":true}, and when a line arrives on
// standard input does its task, prints its answer as one JSON line and exits. The task: with
// SEND_LOGOUTS=1, one round of the back-channel logout sender (prints {"sent","failed"}); else it
// sends TOKEN_BODY (x-www-form-urlencoded) to its own /oauth/token with TOKEN_AUTHORIZATION
// (prints {"status","body"}). Started by tests/support/other-instance.ts. The environment (DATABASE_URL,
// AUTH_SECRET, AUTH_URL, AUTH_PROVIDER) is the test's: the same issuer, another process.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { sendDueLogouts } from "../../app/auth/provider/backchannel.server.ts";
import { handleEngineRequest } from "../../app/auth/provider/engine.server.ts";
import { closeDb } from "../../app/db/client.server.ts";

const server = createServer((req, res) => {
  req.headers["x-vestibule-remote-addr"] = req.socket.remoteAddress ?? "";
  void handleEngineRequest(req, res);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token`;
// Warm: the engine and its keys are loaded before the signal, so both instances start even.
await fetch(url.replace("/oauth/token", "/.well-known/openid-configuration")).then((r) => r.arrayBuffer());
console.log(JSON.stringify({ ready: true }));
const lines = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => lines.once("line", () => resolve()));
if (process.env.SEND_LOGOUTS === "1") {
  console.log(JSON.stringify(await sendDueLogouts()));
} else {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Authorization: process.env.TOKEN_AUTHORIZATION! },
    body: process.env.TOKEN_BODY!,
  });
  console.log(JSON.stringify({ status: res.status, body: await res.json() }));
}
server.close();
await closeDb();
process.exit(0);
