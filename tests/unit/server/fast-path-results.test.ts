// What the fast path (server/fast-path.ts) makes of a resource route's result must be what React
// Router's resource-request handler makes of it (server-runtime handleQueryRouteResult and
// handleQueryRouteError): a Response is the answer; a string becomes a text answer; any other
// value becomes JSON; nothing returned is React Router's "Expected a Response" error, a 500 the
// app's handleError hears about; a thrown Response is the answer. The app's own routes all return
// Responses (the byte-for-byte test, tests/browser/fast-path.test.ts, runs them); these cases
// are the ones no route of the app reaches today, served through a real node:http server.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ServerBuild } from "react-router";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFastPath } from "../../../server/fast-path";
import { rawRequest } from "../../support/raw-http";

let result: () => unknown = () => null;
const errors: unknown[] = [];
let server: Server;
let base: string;

const build = {
  routes: {
    root: { id: "root", module: {} },
    "routes/probe": {
      id: "routes/probe",
      parentId: "root",
      path: "auth/providers",
      module: {
        loader: async () => result(),
        action: async () => result(),
      },
    },
  },
  entry: { module: { handleError: (error: unknown) => errors.push(error) } },
} as unknown as ServerBuild;

beforeAll(async () => {
  const fastPath = createFastPath(build);
  server = createServer((req, res) => {
    // As server/main.ts does before the fast path: a header set first makes node's writeHead take
    // the answer's headers one by one.
    res.setHeader("X-Request-Id", "probe");
    if (!fastPath(req, res)) {
      res.statusCode = 404;
      res.end("not the fast path's");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function answerTo(value: () => unknown) {
  result = value;
  errors.length = 0;
  const res = await fetch(`${base}/auth/providers`);
  return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
}

describe("the fast path answers a resource route's result as React Router does", () => {
  it("a Response is the answer", async () => {
    const answer = await answerTo(() => new Response("teapot", { status: 418, headers: { "Content-Type": "text/x-tea" } }));
    expect(answer).toEqual({ status: 418, type: "text/x-tea", body: "teapot" });
  });

  it("a string is a text answer", async () => {
    const answer = await answerTo(() => "plain words");
    expect(answer).toEqual({ status: 200, type: "text/plain;charset=UTF-8", body: "plain words" });
  });

  it("an object, an array or null is a JSON answer", async () => {
    expect(await answerTo(() => ({ a: 1, b: [true] }))).toEqual({ status: 200, type: "application/json", body: '{"a":1,"b":[true]}' });
    expect(await answerTo(() => [1, 2])).toEqual({ status: 200, type: "application/json", body: "[1,2]" });
    expect(await answerTo(() => null)).toEqual({ status: 200, type: "application/json", body: "null" });
  });

  it("nothing returned is a 500 that says nothing more, and the app's handleError hears of it", async () => {
    const answer = await answerTo(() => undefined);
    expect(answer.status).toBe(500);
    expect(answer.body).toBe("Unexpected Server Error");
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/Expected a Response/);
  });

  it("a thrown Response is the answer, and a thrown error a 500 with nothing of its message", async () => {
    const refused = await answerTo(() => {
      throw new Response(null, { status: 403 });
    });
    expect(refused.status).toBe(403);
    expect(errors).toEqual([]);
    const failed = await answerTo(() => {
      throw new Error("internal detail");
    });
    expect(failed).toEqual({ status: 500, type: "text/plain", body: "Unexpected Server Error" });
    expect(errors).toHaveLength(1);
  });

  it("an answer Node cannot write is an empty 500 whose framing holds: no length left from the headers it had taken", async () => {
    // undici lets a control character through in a value, node:http's writeHead refuses it, after
    // the headers before it in order (Content-Length among them) were set on the response.
    result = () => new Response("hello", { headers: { "Content-Length": "5", "X-Probe": "a\u0001b" } });
    const answer = await rawRequest((server.address() as AddressInfo).port, "GET /auth/providers HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(answer.status).toBe(500);
    expect(answer.headers["content-length"]).not.toBe("5");
  });
});
