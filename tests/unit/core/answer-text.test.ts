// The JSON answers the production server's fast path writes itself (server/fast-path.ts, ADR 089):
// built while the request says so, the Response has no body stream and its text lies beside it;
// anywhere else (the dev server, React Router's pipeline, the tests) it is an ordinary Response.
import { describe, expect, it } from "vitest";
import { answerTextOf, copyResponse, jsonResponse } from "../../../app/auth/core/respond.server";
import { answerWrittenDirectly, runWithRequestId } from "../../../app/auth/core/request-context.server";
import { withHeaders } from "../../../app/auth/core/security-headers.server";

const COOKIE = "authjs.csrf-token=abc; Path=/; HttpOnly; SameSite=Lax";

describe("a JSON answer", () => {
  it("is an ordinary Response with its body outside the fast path", async () => {
    const response = jsonResponse({ csrfToken: "t" }, { noCache: true, setCookies: [COOKIE, null] });
    expect(answerTextOf(response)).toBeUndefined();
    expect(await response.text()).toBe('{"csrfToken":"t"}');
    expect(response.headers.get("Content-Type")).toBe("application/json");
    expect(response.headers.get("Cache-Control")).toBe("private, no-cache, no-store");
    expect(response.headers.getSetCookie()).toEqual([COOKIE]);
  });

  it("carries its text beside a bodiless Response, the same headers, when the fast path writes it", () => {
    const response = runWithRequestId("r", () => {
      answerWrittenDirectly();
      return jsonResponse({ csrfToken: "t" }, { noCache: true, setCookies: [COOKIE] });
    });
    expect(response.body).toBeNull();
    expect(answerTextOf(response)).toBe('{"csrfToken":"t"}');
    expect([...response.headers]).toEqual([...jsonResponse({ csrfToken: "t" }, { noCache: true, setCookies: [COOKIE] }).headers]);
  });

  it("says its length in bytes, on both paths, so it is not sent chunked (ADR 099)", async () => {
    const body = { name: "Zoë 名前 🙂" };
    const ordinary = jsonResponse(body);
    const text = await ordinary.text();
    expect(ordinary.headers.get("Content-Length")).toBe(String(Buffer.byteLength(text)));
    expect(Number(ordinary.headers.get("Content-Length"))).toBeGreaterThan(text.length);
    const direct = runWithRequestId("r", () => (answerWrittenDirectly(), jsonResponse(body)));
    expect(direct.headers.get("Content-Length")).toBe(String(Buffer.byteLength(answerTextOf(direct)!)));
  });

  it("keeps its text in a copy made for immutable headers", () => {
    const response = runWithRequestId("r", () => (answerWrittenDirectly(), jsonResponse(null)));
    const copy = copyResponse(response);
    expect(copy).not.toBe(response);
    expect(answerTextOf(copy)).toBe("null");
    expect(answerTextOf(withHeaders(response, { "X-Test": "1" }))).toBe("null");
  });

  it("is not written directly for another request in the same process", () => {
    runWithRequestId("fast", () => answerWrittenDirectly());
    const response = runWithRequestId("other", () => jsonResponse(1));
    expect(answerTextOf(response)).toBeUndefined();
  });
});
