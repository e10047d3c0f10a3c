// One more instance of the app for a test, as a separate process (./instance-process.ts): once the
// test says go, it signs EMAIL in CALLS times at once, each from a fresh browser (no device cookie),
// through the real callback route, and prints the answers' statuses as one JSON line. The
// environment (database, AUTH_SECRET, SMTP) is the test's.
import { closeDb } from "../../app/db/client.server.ts";
import { mailSenderIdle, stopMailSender } from "../../app/mail/queue.server.ts";
import { signIn } from "./auth.ts";
import { CookieJar } from "./http.ts";
import { readyThenGo } from "./instance-process.ts";

const calls = Number(process.env.CALLS ?? "1");
await readyThenGo();
const results = await Promise.all(Array.from({ length: calls }, () => signIn(new CookieJar(), process.env.EMAIL!)));
// What this instance queued it sends itself, as a server would, before it stops.
stopMailSender();
await mailSenderIdle();
console.log(JSON.stringify({ statuses: results.map((r) => r.res.status) }));
await closeDb();
// On PostgreSQL the revocation listener (ADR 067) holds a connection of its own: done is done.
process.exit(0);
