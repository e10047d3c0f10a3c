// One more instance of the app for a test, as a separate process: at START_AT (epoch ms) it asks
// getAccessToken(USER_ID, "oidc") CALLS times at once and prints the tokens it got as one JSON line.
// The environment (DATABASE_URL, AUTH_SECRET, AUTH_OIDC_*) is the test's.
import { getAccessToken } from "../../app/auth/oauth/tokens.server.ts";
import { closeDb } from "../../app/db/client.server.ts";

const startAt = Number(process.env.START_AT);
const calls = Number(process.env.CALLS ?? "1");
await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
const tokens = await Promise.all(Array.from({ length: calls }, () => getAccessToken(process.env.USER_ID!, "oidc")));
console.log(JSON.stringify({ tokens }));
await closeDb();
