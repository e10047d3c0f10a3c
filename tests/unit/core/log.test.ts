// The pieces of core/log.server.ts a line depends on (docs/decisions/050): which X-Request-Id is
// taken, and the scrub of secret URL parameters. Whole flows are scanned in tests/browser/ops-logs.
import { describe, expect, it } from "vitest";
import { currentRequestId, requestIdFrom, runWithRequestId, scrubSecrets } from "../../../app/auth/core/log.server";

describe("requestIdFrom", () => {
  it("keeps 1 to 128 characters of letters, digits and ._:-", () => {
    for (const id of ["a", "0f8c1e2a-5b7d-4c3e-9a1b-2c3d4e5f6a7b", "Root=1".replace("=", ":"), "x".repeat(128), "lb.1:2_3-4"]) {
      expect(requestIdFrom(id)).toBe(id);
    }
  });

  it("replaces anything else with a new UUID", () => {
    for (const id of [undefined, null, "", "x".repeat(129), "a b", "a\nb", "a;b", "<script>", "ü", "a=b"]) {
      const got = requestIdFrom(id);
      expect(got).not.toBe(id);
      expect(got).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    expect(requestIdFrom(null)).not.toBe(requestIdFrom(null));
  });

  it("runWithRequestId makes the id visible to everything the request awaits", async () => {
    expect(currentRequestId()).toBeUndefined();
    const seen = await runWithRequestId("req-1", async () => {
      await new Promise((r) => setTimeout(r, 5));
      return currentRequestId();
    });
    expect(seen).toBe("req-1");
    expect(currentRequestId()).toBeUndefined();
  });
});

describe("scrubSecrets", () => {
  it("censors the values of token, code, state and password parameters, wherever the URL sits in the text", () => {
    expect(scrubSecrets("GET https://a.test/auth/callback/email?token=abc123&email=a%40b.c failed")).toBe(
      "GET https://a.test/auth/callback/email?token=[redacted]&email=a%40b.c failed",
    );
    expect(scrubSecrets("/auth/callback/oidc?state=s1&code=c2&iss=x")).toBe("/auth/callback/oidc?state=[redacted]&code=[redacted]&iss=x");
    expect(scrubSecrets("x#access_token=t&id_token=i")).toBe("x#access_token=[redacted]&id_token=[redacted]");
    expect(scrubSecrets("?PASSWORD=p")).toBe("?PASSWORD=[redacted]");
  });

  it("leaves text without such parameters alone", () => {
    for (const text of ["plain text", "https://a.test/?callbackUrl=%2Faccount", "mytoken=1 without a separator", "error=Configuration"]) {
      expect(scrubSecrets(text)).toBe(text);
    }
  });
});
