// The fast path's plain headers (app/auth/core/direct-answer.server.ts, ADR 099) stand in for
// undici's Headers between the route and the writer: for any sequence of calls they must answer as
// undici's do — the same entries in the same order, the same get/has/getSetCookie, the same
// refusals — or the fast path would send other bytes than React Router's pipeline.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DirectAnswer, PlainHeaders } from "../../../app/auth/core/direct-answer.server";

const NAMES = ["Cookie", "cookie", "Content-Type", "content-type", "Set-Cookie", "set-cookie", "SET-COOKIE", "Vary", "X-Request-Id", "x-a", "X-A", "Cache-Control", "bad name", "", "é", "x\n"];
const VALUES = ["application/json", "€ euro", "ÿ latin", "ctl\u0001char", "a=1; b=2", "\u000bvertical tab\u000c", "\u00a0no-break space\u00a0", "a=1; Path=/; HttpOnly", "b=2", " padded\t", "\r\n trimmed \n", "a, b", "", "x\ny", "nul\0", "tab\tinside", "Ünïcode", "0"];
type Call = { method: "append" | "set" | "delete" | "get" | "has"; name: string; value: string };
const call = fc.record({
  method: fc.constantFrom<Call["method"]>("append", "set", "delete", "get", "has"),
  name: fc.constantFrom(...NAMES),
  value: fc.constantFrom(...VALUES),
});

/** What a call gives back, or the kind of error it throws. */
function outcome(headers: Headers, { method, name, value }: Call): unknown {
  try {
    if (method === "append" || method === "set") return headers[method](name, value);
    return headers[method](name);
  } catch (error) {
    return `throws ${(error as Error).constructor.name}`;
  }
}

function state(headers: Headers) {
  const read = (name: string) => outcome(headers, { method: "get", name, value: "" });
  const listed: [string, string][] = [];
  headers.forEach((value, name, parent) => {
    expect(parent).toBe(headers);
    listed.push([name, value]);
  });
  return { entries: [...headers], keys: [...headers.keys()], values: [...headers.values()], listed, cookies: headers.getSetCookie(), got: NAMES.map(read) };
}

describe("the fast path's plain headers", () => {
  it("answer every sequence of calls as undici's Headers do", () => {
    fc.assert(
      fc.property(fc.array(call, { maxLength: 25 }), (calls) => {
        const undici = new Headers();
        const plain = new PlainHeaders();
        for (const c of calls) expect(outcome(plain, c)).toEqual(outcome(undici, c));
        expect(state(plain)).toEqual(state(undici));
      }),
      { numRuns: 2_000 },
    );
  });

  it("a JSON answer's own headers come out as a Response's would", () => {
    const steps = (h: Headers) => {
      h.set("Content-Type", "application/json");
      h.set("Cache-Control", "private, no-cache, no-store");
      h.set("Content-Length", "17");
      h.append("Set-Cookie", "a=1; Path=/");
      h.append("Set-Cookie", "b=2; Path=/");
      h.set("X-Frame-Options", "DENY");
      h.set("Vary", "Cookie");
      h.append("Vary", "Accept-Language");
    };
    const answer = new DirectAnswer('{"csrfToken":"t"}', 200);
    const response = new Response('{"csrfToken":"t"}');
    steps(answer.headers);
    steps(response.headers);
    expect([...answer.headers]).toEqual([...response.headers]);
    expect(answer.headers.get("set-cookie")).toBe(response.headers.get("set-cookie"));
  });
});

describe("a direct answer", () => {
  it("is a bodiless Response with its text beside it", async () => {
    const answer = new DirectAnswer("null", 404);
    expect(answer).toBeInstanceOf(Response);
    expect(answer.status).toBe(404);
    expect(answer.statusText).toBe("");
    expect(answer.body).toBeNull();
    expect(answer.bodyText).toBe("null");
    expect(await answer.text()).toBe("");
  });

  it("copies to an answer with the same text, status and headers, apart from the first", () => {
    const answer = new DirectAnswer("1", 201);
    answer.headers.append("Set-Cookie", "a=1");
    answer.headers.append("Set-Cookie", "b=2");
    answer.headers.set("Content-Type", "application/json");
    const copy = answer.copy();
    expect(copy).not.toBe(answer);
    expect([copy.bodyText, copy.status, [...copy.headers]]).toEqual(["1", 201, [...answer.headers]]);
    copy.headers.set("X-More", "1");
    expect(answer.headers.has("X-More")).toBe(false);
  });

  it("hands its headers to a Response built from it (new Response(body, answer))", () => {
    const answer = new DirectAnswer("1", 202);
    answer.headers.append("Set-Cookie", "a=1");
    answer.headers.append("Set-Cookie", "b=2");
    const response = new Response(answer.body, answer);
    expect(response.status).toBe(202);
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
  });
});
