// The one body reader (app/auth/core/body.server.ts): media types, limits applied while the body
// arrives, one read per Request.
import { describe, expect, it } from "vitest";
import { BadRequestError, CLIENT_LOG_BODY_LIMIT, DEFAULT_BODY_LIMIT, readBody } from "../../../app/auth/core/body.server";

/**
 * A chunked request body made on the fly: `total` bytes in `chunk`-sized pieces, starting with
 * `prefix`. `pulled()` says how many bytes the reader took — the limit must stop it, not the end.
 */
function streamed(
  total: number,
  { type = "application/x-www-form-urlencoded", prefix = "", chunk = 16 * 1024, headers = {} as Record<string, string> } = {},
) {
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= total) return controller.close();
        const size = Math.min(chunk, total - pulled);
        const bytes = new Uint8Array(size).fill(0x61);
        if (pulled === 0) bytes.set(new TextEncoder().encode(prefix).subarray(0, size));
        pulled += size;
        controller.enqueue(bytes);
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  const request = new Request("http://localhost/auth/signin", {
    method: "POST",
    headers: { ...(type ? { "Content-Type": type } : {}), ...headers },
    body,
    duplex: "half",
  } as RequestInit);
  return { request, pulled: () => pulled, cancelled: () => cancelled };
}

async function refusal(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return (error as BadRequestError).status;
  }
  throw new Error("the body was accepted");
}

const post = (body: BodyInit | null, type?: string, headers: Record<string, string> = {}) =>
  new Request("http://localhost/x", { method: "POST", body, headers: { ...(type ? { "Content-Type": type } : {}), ...headers } });

describe("readBody", () => {
  it("parses form and JSON bodies", async () => {
    expect(await readBody(post("a=1&b=%C3%A9", "application/x-www-form-urlencoded; charset=UTF-8"))).toEqual({ a: "1", b: "é" });
    expect(await readBody(post('{"a":1,"b":{"c":true}}', "Application/JSON"))).toEqual({ a: 1, b: { c: true } });
  });

  it("reads nothing sent with no type as an empty form, and anything else with no type as 415", async () => {
    expect(await readBody(post(null))).toEqual({});
    const { request, pulled } = streamed(10, { type: "" });
    expect(await refusal(readBody(request))).toBe(415);
    expect(pulled()).toBe(0);
  });

  it.each(["multipart/form-data; boundary=x", "text/plain", "application/xml", "application/json-patch+json"])(
    "refuses %s with 415 before reading a byte",
    async (type) => {
      const { request, pulled } = streamed(1024 * 1024, { type });
      expect(await refusal(readBody(request))).toBe(415);
      expect(pulled()).toBe(0);
    },
  );

  it.each(["null", "[]", "[1,2]", "42", '"text"', "true", "{broken", ""])("refuses the JSON body %j with 400", async (json) => {
    expect(await refusal(readBody(post(json, "application/json")))).toBe(400);
  });

  it("refuses a declared Content-Length over the limit with 413 before reading", async () => {
    const { request, pulled } = streamed(DEFAULT_BODY_LIMIT + 1, { headers: { "Content-Length": String(DEFAULT_BODY_LIMIT + 1) } });
    expect(request.headers.get("Content-Length")).toBe(String(DEFAULT_BODY_LIMIT + 1));
    expect(await refusal(readBody(request))).toBe(413);
    expect(pulled()).toBe(0);
  });

  it("accepts exactly the limit and refuses one byte more", async () => {
    expect(await readBody(streamed(DEFAULT_BODY_LIMIT, { prefix: "a=" }).request)).toHaveProperty("a");
    expect(await refusal(readBody(streamed(DEFAULT_BODY_LIMIT + 1, { prefix: "a=" }).request))).toBe(413);
  });

  it("stops a 1 GiB chunked body at the limit: reads at most one chunk past it and leaves the rest unread", async () => {
    const chunk = 16 * 1024;
    const huge = streamed(1024 * 1024 * 1024, { chunk, prefix: "csrfToken=x&a=" });
    expect(await refusal(readBody(huge.request))).toBe(413);
    // Not cancelled: on the production server a cancel destroys the socket before the 413 is out.
    expect(huge.cancelled()).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Nothing keeps pulling once the reader has let go: at most the stream's own one-chunk queue.
    expect(huge.pulled()).toBeLessThanOrEqual(DEFAULT_BODY_LIMIT + 2 * chunk);
    const json = streamed(1024 * 1024 * 1024, { chunk, type: "application/json", prefix: '{"a":"' });
    expect(await refusal(readBody(json.request))).toBe(413);
    expect(json.pulled()).toBeLessThanOrEqual(DEFAULT_BODY_LIMIT + chunk);
  });

  it("applies a smaller limit (the client log's 4 KiB)", async () => {
    const body = streamed(CLIENT_LOG_BODY_LIMIT + 1, { chunk: 1024 });
    expect(await refusal(readBody(body.request, CLIENT_LOG_BODY_LIMIT))).toBe(413);
    expect(body.pulled()).toBeLessThanOrEqual(CLIENT_LOG_BODY_LIMIT + 1024);
  });

  it("reads a Request once: a second call gets the same body, or the same refusal", async () => {
    const request = post("csrfToken=abc&json=true", "application/x-www-form-urlencoded");
    const first = await readBody(request);
    expect(request.bodyUsed).toBe(true);
    expect(await readBody(request)).toBe(first);

    const big = streamed(1024 * 1024);
    expect(await refusal(readBody(big.request))).toBe(413);
    expect(await refusal(readBody(big.request))).toBe(413);
  });

  it("a later, smaller limit is still enforced on a body read under a larger one", async () => {
    const request = post(`a=${"x".repeat(5000)}`, "application/x-www-form-urlencoded");
    expect(await readBody(request)).toHaveProperty("a");
    expect(await refusal(readBody(request, CLIENT_LOG_BODY_LIMIT))).toBe(413);
  });

  it("answers a body someone else already consumed, or a broken stream, with 400 rather than an error", async () => {
    const used = post("a=1", "application/x-www-form-urlencoded");
    await used.text();
    expect(await refusal(readBody(used))).toBe(400);
    const broken = new Request("http://localhost/x", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: new ReadableStream({
        pull(controller) {
          controller.error(new Error("connection reset"));
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(await refusal(readBody(broken))).toBe(400);
  });
});
