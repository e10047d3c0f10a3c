// The password policy: length in code points after NFKC, the bundled list,
// the address, and the Have I Been Pwned range check against a local fixture server that records
// exactly what it was sent.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { dictionary } from "@zxcvbn-ts/language-common";
import { ConfigError, loadConfig } from "../../../app/auth/core/config.server";
import { cookieNames } from "../../../app/auth/core/cookies.server";
import {
  checkPassword,
  checkPasswordLocally,
  codePointLength,
  commonPasswords,
  normalizePassword,
  POLICY_MAX_LENGTH,
} from "../../../app/auth/credentials/password-policy.server";
import { hashPassword, verifyPassword } from "../../../app/auth/credentials/password.server";
import { runWithLocale, t } from "../../../app/i18n/t.server";

type PolicyConfig = { passwordMinLength: number; passwordContextWords: readonly string[]; passwordBreachCheck: { url: string } | null };
const config: PolicyConfig = { passwordMinLength: 8, passwordContextWords: [], passwordBreachCheck: null };
const reasonOf = async (password: unknown, email: string | null = "ada.lovelace@example.com", c: PolicyConfig = config) => {
  const result = await checkPassword(password, { email }, c);
  return result.ok ? "ok" : result.reason;
};

describe("the password policy", () => {
  it("bundles a list of well over 10 000 common passwords", () => {
    expect(dictionary["passwords-common"].length).toBeGreaterThanOrEqual(10_000);
    expect(commonPasswords().size).toBeGreaterThanOrEqual(10_000);
    console.log(`bundled common-password list: ${commonPasswords().size} distinct entries (lower-cased)`);
  });

  it("refuses listed passwords whatever their case, and lets an uncommon one of the same length through", async () => {
    for (const p of ["password", "PASSWORD", "Password1", "iloveyou", "qwertyuiop", "12345678", "trustno1", "baseball"]) {
      expect(await reasonOf(p), p).toBe("tooCommon");
    }
    expect(await reasonOf("velvet lantern orbit")).toBe("ok");
  });

  it("a visitor who types one character twenty times, a sequence or a row of keys is refused with its own text, whatever the length; long random passphrases pass", async () => {
    const patterns = [
      "aaaaaaaaaaaaaaaaaaaa",
      "a".repeat(200),
      "11111111",
      "abababababab",
      "123123123123",
      "abcdefghijklmnopqrstuvwxyz",
      "ABCDEFGHIJ",
      "98765432",
      "0123456789012",
      "zyxwvutsrq",
      "acegikmoqsuw",
      "qwertyuiop[]",
      "asdfghjkl;'",
      "zxcvbnm,./",
      "qwertzuiopü",
      "azertyuiop",
      "1234567890-=",
      "zaq12wsxcde",
      "qwertyqwertyqwerty",
      "passwordpassword",
      "ǅǅǅǅǅǅǅǅ",
    ];
    for (const p of patterns) expect(await reasonOf(p), p).toMatch(/^(simplePattern|tooCommon)$/);
    for (const p of ["aaaaaaaaaaaaaaaaaaaa", "abcdefghijklmnopqrstuvwxyz", "zxcvbnm,./", "qwertyqwertyqwerty"]) expect(await reasonOf(p), p).toBe("simplePattern");
    for (const p of ["velvet lantern orbit", "correct horse battery staple", "Tür-Klinke 7 Regenschirm", "qwe velvet rty lantern", "aaaa bbbb velvet quarry", "hfT9$kq2!mZp", "🔑🌍🎈🧭🪁🦉🌵🎲"]) {
      expect(await reasonOf(p), p).toBe("ok");
    }
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const result = await runWithLocale(locale, () => checkPassword("aaaaaaaaaaaaaaaaaaaa", { email: null }, config));
      expect(result.ok ? null : result.message).toBe(runWithLocale(locale, () => t("password.simplePattern")));
    }
  });

  it("a visitor who signs up with a common word and some digits, a year, '123' or '!' around it, or in l33t, is refused with its own text; passphrases and random passwords pass", async () => {
    const decorated = [
      "password1234567",
      "1234567password",
      "password2024",
      "2024password!",
      "P@ssw0rd2024!",
      "p4ssw0rd",
      "dr@g0n1999",
      "iloveyou!!!",
      "iloveyou123",
      "monkey1999!",
      "sunshine 2024",
      "baseball11111",
      "football-2023",
      "123456dragon",
    ];
    // Some are on the list themselves ("p4ssw0rd"): refused as listed.
    for (const p of decorated) expect(await reasonOf(p), p).toMatch(/^(commonWord|tooCommon)$/);
    for (const p of ["password1234567", "P@ssw0rd2024!", "dr@g0n1999", "sunshine 2024"]) expect(await reasonOf(p), p).toBe("commonWord");
    // The word alone is a simple pattern: said as one.
    for (const p of ["abcdefgh2024", "aaaaaaaa1999"]) expect(await reasonOf(p), p).toBe("simplePattern");
    expect(await reasonOf("qwertyuiop2024!")).toMatch(/^(commonWord|simplePattern)$/);
    // Not a word with a decoration: a long random number after it, words of a passphrase, random characters.
    for (const p of ["dragon83920571", "velvet lantern orbit 2024", "hfT9$kq2!mZp", "lantern7velvet", "Tür-Klinke 7 Regenschirm"]) expect(await reasonOf(p), p).toBe("ok");
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const result = await runWithLocale(locale, () => checkPassword("password1234567", { email: null }, config));
      expect(result.ok ? null : result.message).toBe(runWithLocale(locale, () => t("password.commonWord")));
    }
  });

  it("any listed word of four letters or more, with a year, up to four digits or symbols, or a run of digits around it, is refused (property)", () => {
    const words = [...commonPasswords()].filter((w) => /^[a-z]{4,}$/.test(w));
    const word = fc.constantFrom(...words);
    const affix = fc.oneof(
      fc.integer({ min: 1900, max: 2099 }).map(String),
      fc.stringMatching(/^[0-9!?.*#$]{1,4}$/),
      fc.integer({ min: 0, max: 9 }).chain((start) => fc.integer({ min: 3, max: 10 }).map((n) => Array.from({ length: n }, (_, i) => String((start + i) % 10)).join(""))),
    );
    fc.assert(
      fc.property(word, affix, fc.boolean(), fc.boolean(), (w, a, before, capital) => {
        const core = capital ? w[0]!.toUpperCase() + w.slice(1) : w;
        const password = before ? `${a}${core}` : `${core}${a}`;
        const result = checkPasswordLocally(password, { email: null }, { passwordMinLength: 8, passwordContextWords: [] });
        return !result.ok;
      }),
      { numRuns: 300 },
    );
  });

  it("counts code points after NFKC, never UTF-16 units or bytes, and never truncates", async () => {
    // Seven emoji are 14 UTF-16 units but 7 characters: too short. Eight are enough.
    expect(await reasonOf("🔑".repeat(7))).toBe("tooShort");
    expect(await reasonOf("🔑🌍🎈🧭🪁🦉🌵🎲")).toBe("ok");
    // NFKC: "ﬃ" (one code point) becomes "ffi" (three).
    expect(codePointLength(normalizePassword("ﬃﬃ+zq"))).toBe(9);
    expect(await reasonOf("ﬃﬃ+zq")).toBe("ok");
    // 256 code points pass, 257 are refused as too long (not cut to 256).
    // (Not a repeat of a short unit, which is refused as a pattern: two SHA-512 digests in hex.)
    const long = ["one", "two"].map((seed) => createHash("sha512").update(seed).digest("hex")).join("");
    expect(await reasonOf(long)).toBe("ok");
    expect(await reasonOf(long + "x")).toBe("tooLong");
    expect(POLICY_MAX_LENGTH).toBe(256);
    // Every code point counts: a password differing only past the 72nd byte is another password.
    const h = await hashPassword("z".repeat(100) + "A");
    expect(await verifyPassword(h, "z".repeat(100) + "B")).toBe(false);
    expect(await verifyPassword(h, "z".repeat(100) + "A")).toBe(true);
  });

  it("takes AUTH_PASSWORD_MIN_LENGTH, with its own text", async () => {
    const result = await checkPassword("velvet lantern", { email: null }, { passwordMinLength: 16, passwordContextWords: [], passwordBreachCheck: null });
    expect(result).toEqual({ ok: false, reason: "tooShort", message: "Use at least 16 characters." });
  });

  it("has no composition rules: lower-case letters alone are fine", async () => {
    expect(await reasonOf("correcthorsebatterystaple")).toBe("ok");
  });

  it("refuses the e-mail address and its local part, ignoring case", async () => {
    expect(await reasonOf("Ada.Lovelace@Example.com")).toBe("yourAddress");
    expect(await reasonOf("ADA.LOVELACE")).toBe("yourAddress");
    expect(await reasonOf("ada.lovelace1")).toBe("ok");
    expect(await reasonOf("ada.lovelace", null)).toBe("ok");
  });

  it("gives each reason its own message", async () => {
    const messages = new Set<string>();
    for (const [p, c] of [
      ["short", config],
      ["x".repeat(300), config],
      ["password1", config],
      ["ada.lovelace", config],
    ] as const) {
      const r = checkPasswordLocally(p, { email: "ada.lovelace@example.com" }, c);
      if (!r.ok) messages.add(r.message);
    }
    expect(messages.size).toBe(4);
  });

  it("a lone password needs 15 characters by default (NIST 800-63B-4); 8 while the owner's second factor is on, never more than the floor", async () => {
    const floor = loadConfig({ AUTH_SECRET: "policy-test-secret-0123456789abcdef0123456789" });
    expect(floor.passwordMinLength).toBe(15);
    const alone = await checkPassword("velvet lantern", { email: null }, floor);
    expect(alone).toEqual({ ok: false, reason: "tooShort", message: "Use at least 15 characters." });
    expect((await checkPassword("velvet lantern", { email: null, secondFactor: true }, floor)).ok).toBe(true);
    expect(await checkPassword("velvet", { email: null, secondFactor: true }, floor)).toMatchObject({ reason: "tooShort", message: "Use at least 8 characters." });
    expect((await checkPassword("velvet lanterns", { email: null }, floor)).ok).toBe(true);
  });

  it("refuses the site's name, its host and AUTH_PASSWORD_CONTEXT_WORDS inside a password, whatever the case", async () => {
    const c = loadConfig({ AUTH_SECRET: "policy-test-secret-0123456789abcdef0123456789", AUTH_URL: "https://login.acme-widgets.example", AUTH_PASSWORD_CONTEXT_WORDS: "Widgetron, hq, Quokka Corp" });
    expect(c.passwordContextWords).toEqual(expect.arrayContaining(["vestibule", "login.acme-widgets.example", "acme-widgets", "login", "example", "widgetron", "quokka corp"]));
    // Shorter than 4 characters: never a context word ("hq", the top-level "com" of other hosts).
    expect(c.passwordContextWords).not.toContain("hq");
    for (const p of ["my VESTIBULE password!", "acme-widgets forever 2026", "widgetron rules the world", "i love quokka corp a lot"]) {
      expect(await reasonOf(p, null, c), p).toBe("contextWord");
    }
    expect(await reasonOf("hq velvet lantern orbit", null, c)).toBe("ok");
    const r = await checkPassword("vestibule lantern orbit", { email: null }, c);
    expect(r.ok ? null : r.message).toBe("Do not use the name of this site or its address in your password.");
  });

  it("refuses the user's name inside a password, word by word, ignoring case and words under 4 characters", async () => {
    const owner = { email: "ada@example.com", name: "Ada Lovelace-Byron" };
    const reason = async (p: string) => {
      const r = await checkPassword(p, owner, { ...config, passwordMinLength: 15 });
      return r.ok ? "ok" : r.reason;
    };
    expect(await reason("i am LOVELACE the countess")).toBe("yourName");
    expect(await reason("byron wrote poems in 1812")).toBe("yourName");
    // "Ada" is under 4 characters: it may appear.
    expect(await reason("ada velvet lantern orbit")).toBe("ok");
    const r = await checkPassword("lovelace velvet lantern", owner, config);
    expect(r.ok ? null : r.message).toBe("Do not use your name in your password.");
  });

  it("verifies a password typed in another Unicode form than the one chosen", async () => {
    const stored = await hashPassword("Ｆｕｌｌｗｉｄｔｈ secret ﬁle");
    expect(await verifyPassword(stored, "Fullwidth secret file")).toBe(true);
  });
});

describe("the Have I Been Pwned range check", () => {
  type Seen = { url: string; method: string; headers: IncomingMessage["headers"]; body: string };
  const seen: Seen[] = [];
  let mode: "answer" | "error" | "hang" = "answer";
  let listed = new Map<string, number>();
  let server: Server;
  let base: string;
  const hanging = new Set<import("node:http").ServerResponse>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        seen.push({ url: req.url!, method: req.method!, headers: req.headers, body });
        if (mode === "hang") return void hanging.add(res);
        if (mode === "error") return void res.writeHead(503).end("down");
        const prefix = req.url!.slice("/range/".length);
        const lines = [...listed].filter(([hash]) => hash.startsWith(prefix)).map(([hash, n]) => `${hash.slice(5)}:${n}`);
        // Padding lines with a count of 0, as the real API adds them.
        lines.push("0018A45C4D1DEF81644B54AB7F969B88D65:0", "00D4F6E8FA6EECAD2A3AA415EEC418D38EC:0");
        res.writeHead(200, { "Content-Type": "text/plain" }).end(lines.join("\r\n"));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    for (const res of hanging) res.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  afterEach(() => {
    seen.length = 0;
    mode = "answer";
    listed = new Map();
    vi.restoreAllMocks();
  });

  const sha1 = (s: string) => createHash("sha1").update(s, "utf8").digest("hex").toUpperCase();
  const hibp = () => ({ passwordMinLength: 8, passwordContextWords: [], passwordBreachCheck: { url: base } });

  it("sends only the first 5 hex digits of the SHA-1 of the NFKC password, with Add-Padding, and refuses a listed suffix", async () => {
    const password = "ﬁnal velvet orbit";
    const digest = sha1(password.normalize("NFKC"));
    listed.set(digest, 3);
    const result = await checkPassword(password, { email: null }, hibp());
    expect(result).toMatchObject({ ok: false, reason: "breached" });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.method).toBe("GET");
    expect(seen[0]!.url).toBe(`/range/${digest.slice(0, 5)}`);
    expect(seen[0]!.url).toMatch(/^\/range\/[0-9A-F]{5}$/);
    expect(seen[0]!.headers["add-padding"]).toBe("true");
    expect(seen[0]!.body).toBe("");
    // Nothing else of the password or its hash left the server.
    const everything = JSON.stringify(seen);
    expect(everything).not.toContain(digest.slice(5, 12));
    expect(everything.toLowerCase()).not.toContain("velvet");
  });

  it("lets a password through when its suffix is absent or listed with a count of 0 (padding)", async () => {
    expect(await reasonOf("quiet amber harbor", null, hibp())).toBe("ok");
    listed.set(sha1("quiet amber harbor"), 0);
    expect(await reasonOf("quiet amber harbor", null, hibp())).toBe("ok");
    expect(seen).toHaveLength(2);
  });

  it("never asks when the local checks already refused", async () => {
    expect(await reasonOf("password", null, hibp())).toBe("tooCommon");
    expect(seen).toHaveLength(0);
  });

  it("fails open on a status other than 200, logging one warn line password.breach_check_unavailable", async () => {
    mode = "error";
    const warn = vi.spyOn(console, "log").mockImplementation(() => {}); // log lines go to stdout (ADR 050)
    expect(await reasonOf("quiet amber harbor", null, hibp())).toBe("ok");
    const lines = warn.mock.calls.map((c) => JSON.parse(String(c[0])));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "warn", event: "password.breach_check_unavailable" });
    expect(JSON.stringify(lines)).not.toContain("quiet");
  });

  it("fails open on a network error", async () => {
    const warn = vi.spyOn(console, "log").mockImplementation(() => {}); // log lines go to stdout (ADR 050)
    const result = await checkPassword("quiet amber harbor", { email: null }, { passwordMinLength: 8, passwordContextWords: [], passwordBreachCheck: { url: "http://127.0.0.1:1" } });
    expect(result.ok).toBe(true);
    expect(warn.mock.calls.map((c) => JSON.parse(String(c[0])).event)).toEqual(["password.breach_check_unavailable"]);
  });

  it("stops waiting after 2 s and fails open", async () => {
    mode = "hang";
    const warn = vi.spyOn(console, "log").mockImplementation(() => {}); // log lines go to stdout (ADR 050)
    const started = Date.now();
    expect(await reasonOf("quiet amber harbor", null, hibp())).toBe("ok");
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(1_900);
    expect(waited).toBeLessThan(10_000);
    expect(JSON.parse(String(warn.mock.calls[0]![0]))).toMatchObject({ event: "password.breach_check_unavailable", reason: "timeout" });
  });
});

describe("configuration of section 15", () => {
  const secret = "config-test-secret-0123456789abcdef0123456789";
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ AUTH_SECRET: secret, ...env });
      return [];
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
  };

  it("has the defaults (sign-up on in development, off in production)", () => {
    const dev = loadConfig({ AUTH_SECRET: secret });
    expect(dev).toMatchObject({ signup: true, passwordMinLength: 15, passwordBreachCheck: null, emailCode: true, emailCodeMaxAge: 600 });
    const prod = loadConfig({ AUTH_SECRET: secret, NODE_ENV: "production", AUTH_URL: "https://app.example.com" });
    expect(prod.signup).toBe(false);
    const hibp = loadConfig({ AUTH_SECRET: secret, AUTH_PASSWORD_BREACH_CHECK: "hibp" });
    expect(hibp.passwordBreachCheck).toEqual({ url: "https://api.pwnedpasswords.com" });
  });

  it("never lets a code outlive its link", () => {
    expect(loadConfig({ AUTH_SECRET: secret, AUTH_EMAIL_MAX_AGE: "120" }).emailCodeMaxAge).toBe(120);
  });

  it("stops the start naming each bad variable", () => {
    expect(problems({ AUTH_PASSWORD_MIN_LENGTH: "7" })[0]).toMatch(/^AUTH_PASSWORD_MIN_LENGTH must be a whole number of characters between 8 and 64/);
    expect(problems({ AUTH_PASSWORD_MIN_LENGTH: "65" })[0]).toMatch(/^AUTH_PASSWORD_MIN_LENGTH/);
    expect(problems({ AUTH_EMAIL_CODE_MAX_AGE: "59" })[0]).toMatch(/^AUTH_EMAIL_CODE_MAX_AGE must be a whole number of seconds between 60 and 3600/);
    expect(problems({ AUTH_EMAIL_CODE_MAX_AGE: "3601" })[0]).toMatch(/^AUTH_EMAIL_CODE_MAX_AGE/);
    expect(problems({ AUTH_PASSWORD_BREACH_CHECK: "yes" })[0]).toMatch(/^AUTH_PASSWORD_BREACH_CHECK/);
    expect(problems({ AUTH_PASSWORD_BREACH_URL: "https://hibp.example/" })[0]).toMatch(/^AUTH_PASSWORD_BREACH_URL/);
    expect(problems({ AUTH_PASSWORD_BREACH_URL: "ftp://hibp.example" })[0]).toMatch(/^AUTH_PASSWORD_BREACH_URL/);
    expect(problems({ AUTH_SIGNUP: "maybe" })[0]).toMatch(/AUTH_SIGNUP/);
    expect(problems({ AUTH_EMAIL_CODE: "maybe" })[0]).toMatch(/AUTH_EMAIL_CODE/);
    expect(problems({ AUTH_PASSWORD_MIN_LENGTH: "64", AUTH_EMAIL_CODE_MAX_AGE: "3600", AUTH_PASSWORD_BREACH_URL: "http://127.0.0.1:9999/hibp" })).toEqual([]);
  });

  it("names the code cookie authjs.email-code, __Host- on https", () => {
    expect(cookieNames(false).emailCode).toBe("authjs.email-code");
    expect(cookieNames(true).emailCode).toBe("__Host-authjs.email-code");
  });
});
