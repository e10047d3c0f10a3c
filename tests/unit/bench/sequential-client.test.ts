// The bench's sequential client (bench/harness.ts sendSequentially) sends the next request when
// the previous answer is whole: its allocation per request is the heap's growth over N answers.
// An answer's end must be found for either framing, or the count is wrong (ADR 099: chunked
// answers read as bodiless counted twice and sent two requests for one).
import { describe, expect, it } from "vitest";
import { responseLength } from "../../../bench/harness";

const HEAD = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";

describe("the end of an answer", () => {
  it("is after Content-Length bytes of body", () => {
    const answer = `${HEAD}Content-Length: 4\r\n\r\nnull`;
    expect(responseLength(Buffer.from(answer + "HTTP/1.1 200"))).toBe(answer.length);
    expect(responseLength(Buffer.from(answer.slice(0, -1)))).toBe(-1);
  });

  it("is after the closing chunk of a chunked body, however it arrived", () => {
    const answer = `${HEAD}Transfer-Encoding: chunked\r\n\r\n4\r\nnull\r\n1a\r\n${"x".repeat(26)}\r\n0\r\n\r\n`;
    expect(responseLength(Buffer.from(answer + "HTTP/1.1 200 OK\r\n\r\n"))).toBe(answer.length);
    for (let cut = 0; cut < answer.length; cut++) expect(responseLength(Buffer.from(answer.slice(0, cut)))).toBe(-1);
  });

  it("follows the chunks when both framings are declared (Transfer-Encoding wins), and refuses a size that is no number", () => {
    const answer = `${HEAD}Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nnull\r\n0\r\n\r\n`;
    expect(responseLength(Buffer.from(answer))).toBe(answer.length);
    expect(() => responseLength(Buffer.from(`${HEAD}Transfer-Encoding: chunked\r\n\r\nzz\r\n`))).toThrow(/not a chunk size/);
  });

  it("is the head's end for an answer without a body", () => {
    const answer = "HTTP/1.1 302 Found\r\nLocation: /\r\n\r\n";
    expect(responseLength(Buffer.from(answer))).toBe(answer.length);
  });
});
