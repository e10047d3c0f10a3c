// One more instance of the app for a test, as a separate process (./instance-process.ts): once the
// test says go, it asks getAccessToken(USER_ID, "oidc") CALLS times at once and prints the tokens
// it got as one JSON line.
// The environment (DATABASE_URL, AUTH_SECRET, AUTH_OIDC_*) is the test's.
import { getAccessToken } from "../../app/auth/oauth/tokens.server.ts";
import { closeDb } from "../../app/db/client.server.ts";
import { readyThenGo } from "./instance-process.ts";

const calls = Number(process.env.CALLS ?? "1");
await readyThenGo();
const tokens = await Promise.all(Array.from({ length: calls }, () => getAccessToken(process.env.USER_ID!, "oidc")));
console.log(JSON.stringify({ tokens }));
await closeDb();
