// Outside server/main.ts (the dev server, this in-process handler) the root middleware gives
// each request its id the same way: a well-formed X-Request-Id is echoed, anything else replaced.
import { beforeAll, describe, expect, it } from "vitest";
import { appHandler } from "../../support/app-handler";
import { ORIGIN } from "../../support/http";

let handle: (request: Request) => Promise<Response>;
beforeAll(async () => {
  handle = await appHandler();
});

describe("X-Request-Id through React Router's pipeline", () => {
  it("echoes a well-formed id on a JSON endpoint and on a page", async () => {
    for (const path of ["/auth/csrf", "/auth/signin"]) {
      const res = await handle(new Request(ORIGIN + path, { headers: { "X-Request-Id": "trace-42.a:b" } }));
      await res.body?.cancel();
      expect(res.status).toBe(200);
      expect(res.headers.get("X-Request-Id")).toBe("trace-42.a:b");
    }
  });

  it("gives a request without one, or with a malformed one, a new id", async () => {
    const none = await handle(new Request(`${ORIGIN}/auth/session`));
    const bad = await handle(new Request(`${ORIGIN}/auth/session`, { headers: { "X-Request-Id": "x".repeat(200) } }));
    expect(none.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(bad.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(bad.headers.get("X-Request-Id")).not.toBe(none.headers.get("X-Request-Id"));
  });
});
