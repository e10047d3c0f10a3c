// A POST whose Origin header is no URL at all (`foo`, `undefined`, `http://[`) is refused by React
// Router itself, before any middleware of ours (its own Origin check, react-router.config.ts). That
// is the client's malformed request, not a failure of the server: a visitor sending any number of
// them writes no error-level line (at most one info line each, with its reason), and gets a plain
// 400 that carries no stack or internal message, on every action route and its `.data` twin.
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { appHandler } from "../../support/app-handler";
import { dbLabel } from "../../support/db";
import { ORIGIN } from "../../support/http";

let handle: (request: Request) => Promise<Response>;
beforeAll(async () => {
  handle = await appHandler();
});
afterEach(() => vi.restoreAllMocks());

const ORIGINS = ["foo", "undefined", "http://["];
const PATHS = ["/auth/signin", "/account", "/?index", "/account.data", "/_root.data?index", "/admin/users/x"];

describe(`a POST with an Origin header that is no URL (${dbLabel})`, () => {
  it("a visitor sending many of them on every action route writes no error-level line and gets a plain 400", async () => {
    const logged = vi.spyOn(console, "log").mockImplementation(() => {});
    let sent = 0;
    for (let round = 0; round < 3; round++) {
      for (const origin of ORIGINS) {
        for (const path of PATHS) {
          const res = await handle(
            new Request(ORIGIN + path, { method: "POST", headers: { Origin: origin, "Content-Type": "application/x-www-form-urlencoded" }, body: "x=1" }),
          );
          sent++;
          expect(res.status, `${origin} ${path}`).toBe(400);
          const body = await res.text();
          expect(body, `${origin} ${path}`).toBe("Bad Request");
        }
      }
    }
    const lines = logged.mock.calls.map((c) => String(c[0]));
    const parsed = lines.flatMap((l) => {
      try {
        return [JSON.parse(l) as { level: string; event: string; reason?: string }];
      } catch {
        return [];
      }
    });
    expect(parsed.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
    expect(lines.join("\n")).not.toContain("is not a valid URL");
    // Each is said once, below error, with its reason.
    const refused = parsed.filter((l) => l.event === "request-refused");
    expect(refused).toHaveLength(sent);
    for (const line of refused) expect(line).toMatchObject({ level: "info", reason: "origin-not-a-url" });
  });
});
