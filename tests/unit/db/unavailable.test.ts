// The one list of failures that mean "database unavailable" (docs/decisions/052): what pg, pg-pool,
// the driver adapter, Prisma and node raise for a refused, cut, stalled or exhausted database —
// also when wrapped as another error's cause — and nothing else.
import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "../../../app/db/unavailable.server";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("isDatabaseUnavailable", () => {
  it("is true for refused, cut and timed-out connections and queries, and for an exhausted pool", () => {
    for (const error of [
      withCode("connect ECONNREFUSED 127.0.0.1:1", "ECONNREFUSED"),
      withCode("read ECONNRESET", "ECONNRESET"),
      new Error("Query read timeout"),
      new Error("timeout exceeded when trying to connect"),
      // pg.Client's own connect timeout (connectionTimeoutMillis), as the start's migration meets it.
      new Error("timeout expired"),
      new Error("Connection terminated due to connection timeout"),
      new Error("Connection terminated unexpectedly"),
      withCode("Can't reach database server at 127.0.0.1:5432", "P1001"),
      withCode("Timed out fetching a new connection from the connection pool.", "P2024"),
      withCode("Transaction API error: Unable to start a transaction in the given time.", "P2028"),
      Object.assign(new Error("init"), { name: "PrismaClientInitializationError" }),
      Object.assign(new Error("adapter"), { cause: { kind: "DatabaseNotReachable" } }),
    ]) {
      expect(isDatabaseUnavailable(error), error.message).toBe(true);
    }
  });

  it("finds the outage as the cause of another error (a method's own failure wrapping it)", () => {
    const wrapped = new Error("EmailSignin", { cause: new Error("outer", { cause: withCode("connect ECONNREFUSED", "ECONNREFUSED") }) });
    expect(isDatabaseUnavailable(wrapped)).toBe(true);
  });

  it("is false for what is not an outage: constraint violations, bugs, bad input, nothing", () => {
    for (const error of [
      withCode("Unique constraint failed on the fields: (`email`)", "P2002"),
      withCode("Record to update not found.", "P2025"),
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      new Error("wrong credentials"),
      null,
      undefined,
      "a string",
      42,
    ]) {
      expect(isDatabaseUnavailable(error)).toBe(false);
    }
  });

  it("is false for another service's refused connection: an OAuth provider's (OutboundError) or the SMTP server's (MailError)", () => {
    const refused = () => withCode("connect ECONNREFUSED 127.0.0.1:1", "ECONNREFUSED");
    const outbound = Object.assign(new Error("token network", { cause: refused() }), { name: "OutboundError" });
    const mail = Object.assign(new Error("SMTP send failed", { cause: refused() }), { name: "MailError" });
    expect(isDatabaseUnavailable(new Error("OAuthCallback", { cause: outbound }))).toBe(false);
    expect(isDatabaseUnavailable(new Error("EmailSignin", { cause: mail }))).toBe(false);
    // Control: the same refusal without the service's error around it is the database's.
    expect(isDatabaseUnavailable(new Error("EmailSignin", { cause: refused() }))).toBe(true);
  });
});
