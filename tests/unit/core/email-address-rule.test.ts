// One rule for an e-mail address wherever one enters (app/auth/core/email-address.ts): the credentials
// form, `npm run user:add` and the dev seed, the e-mail sign-in form, the sign-in page's echo of
// a typed address and the change-address field all read it the same way, with one maximum length.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MAX_EMAIL_ADDRESS_LENGTH, normalizeEmailAddress } from "../../../app/auth/core/email-address.ts";
import { CredentialsInput } from "../../../app/auth/credentials/strategy.server.ts";
import { CredentialsUserInput } from "../../../app/auth/credentials/users.server.ts";

const PASSWORD = "correct horse battery staple";
// 64 + 1 + 189 characters: exactly the maximum, every part within its own limit.
const LONGEST = `${"l".repeat(64)}@${"x".repeat(63)}.${"y".repeat(63)}.${"z".repeat(57)}.com`;

const schemas = [
  ["credentials sign-in", (email: unknown) => CredentialsInput.safeParse({ email, password: PASSWORD })],
  ["credentials user (user:add, seed)", (email: unknown) => CredentialsUserInput.safeParse({ email, password: PASSWORD })],
] as const;

describe("one maximum length", () => {
  it("is RFC 5321's 254 characters, exported once", () => {
    expect(MAX_EMAIL_ADDRESS_LENGTH).toBe(254);
    expect(LONGEST).toHaveLength(MAX_EMAIL_ADDRESS_LENGTH);
    expect(normalizeEmailAddress(LONGEST).ok).toBe(true);
    expect(normalizeEmailAddress(`l${LONGEST}`).ok).toBe(false);
  });

  it("the address change field allows exactly that many characters", () => {
    const source = readFileSync(new URL("../../../app/components/email-change-section.tsx", import.meta.url), "utf8");
    expect(source).toMatch(/maxLength=\{MAX_EMAIL_ADDRESS_LENGTH\}/);
    expect(source).not.toMatch(/maxLength=\{\d+\}/);
  });
});

describe.each(schemas)("%s", (_name, parse) => {
  it("stores and compares what the rule returns (NFKC, lower case, trimmed)", () => {
    for (const typed of ["  Ada@Example.COM ", "ＡＤＡ＠ｅｘａｍｐｌｅ．ｃｏｍ"]) {
      const parsed = parse(typed);
      expect(parsed.success).toBe(true);
      expect(parsed.data?.email).toBe("ada@example.com");
    }
  });

  it("accepts the longest address and refuses one character more", () => {
    expect(parse(LONGEST).success).toBe(true);
    expect(parse(`l${LONGEST}`).success).toBe(false);
  });

  it.each(['"a@b"@example.com', "a@example.com,b@example.com", "a@b@example.com", "a@localhost", "a\u200b@example.com", 42])(
    "refuses %j like every other entry point",
    (typed) => {
      expect(normalizeEmailAddress(typed).ok).toBe(false);
      expect(parse(typed).success).toBe(false);
    },
  );
});

describe("the sign-in page's typed address", () => {
  it("is echoed up to the maximum length and dropped beyond it", async () => {
    const { signinPageData } = await import("../../../app/auth/signin/pages.server.ts");
    const echo = async (email: string) =>
      (await signinPageData(new Request(`http://localhost:3000/auth/signin?${new URLSearchParams({ error: "EmailInvalid", email })}`))).data.email;
    expect(await echo(LONGEST)).toBe(LONGEST);
    expect(await echo(`l${LONGEST}`)).toBe("");
  });
});
