// The pure rules of organizations (docs/features/organizations.md): who may give which role, what a
// domain is and which ones are consumer mailboxes, CSV cells that never run as formulas, and the
// settings AUTH_ORGANIZATIONS, AUTH_ORGANIZATIONS_CREATE and AUTH_DNS_SERVERS.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../app/auth/core/config.server.ts";
import { csvCell, orgEventsCsv } from "../../../app/auth/organizations/audit.server.ts";
import { isConsumerDomain, normalizeDomain } from "../../../app/auth/organizations/domains.server.ts";
import { RESERVED_SLUGS, SLUG_PATTERN } from "../../../app/auth/organizations/organizations.server.ts";
import { atLeast, mayAssign } from "../../../app/auth/organizations/roles.ts";

const base = { NODE_ENV: "test", AUTH_SECRET: "x".repeat(40), VESTIBULE_DATA_DIR: "/tmp/vestibule-unit-orgs" };

describe("organization roles", () => {
  it("rank owner > admin > member", () => {
    expect(atLeast("owner", "admin")).toBe(true);
    expect(atLeast("admin", "owner")).toBe(false);
    expect(atLeast("member", "member")).toBe(true);
  });
  it("admins manage admins and members; only owners touch the owner role; members nothing", () => {
    expect(mayAssign("admin", "member", "admin")).toBe(true);
    expect(mayAssign("admin", "admin", "member")).toBe(true);
    expect(mayAssign("admin", "member", "owner")).toBe(false);
    expect(mayAssign("admin", "owner", "member")).toBe(false);
    expect(mayAssign("owner", "owner", "admin")).toBe(true);
    expect(mayAssign("member", "member", "member")).toBe(false);
  });
  it("slugs: lower-case letters, digits, single inner hyphens, 2 to 40; reserved words apart", () => {
    for (const ok of ["ab", "acme", "acme-eu", "a1-b2-c3", "x".repeat(40)]) expect(SLUG_PATTERN.test(ok), ok).toBe(true);
    for (const bad of ["a", "Acme", "-a", "a-", "a--b", "a_b", "x".repeat(41), "é"]) expect(SLUG_PATTERN.test(bad), bad).toBe(false);
    expect(RESERVED_SLUGS.has("new") && RESERVED_SLUGS.has("switch") && RESERVED_SLUGS.has("invitation")).toBe(true);
  });
});

describe("domains", () => {
  it("normalises to lower-case ASCII without the trailing dot; refuses what is not a host name under a top-level domain", () => {
    expect(normalizeDomain(" Acme.Example. ")).toBe("acme.example");
    expect(normalizeDomain("bücher.example")).toBe("xn--bcher-kva.example");
    for (const bad of ["", "localhost", "1.2.3.4", "a..b", "-a.com", "a-.com", "acme.example/x", "u@acme.example", "acme.example:443", 42, null, "a.123"]) {
      expect(normalizeDomain(bad), String(bad)).toBeNull();
    }
  });
  it("consumer mailbox domains and their subdomains", () => {
    expect(isConsumerDomain("gmail.com")).toBe(true);
    expect(isConsumerDomain("eu.gmail.com")).toBe(true);
    expect(isConsumerDomain("notgmail.com")).toBe(false);
    expect(isConsumerDomain("acme.example")).toBe(false);
  });
});

describe("the audit log's CSV", () => {
  it("a cell beginning with = + - @ (or a tab or carriage return) gets a leading apostrophe; commas, quotes and line breaks are quoted", () => {
    expect(csvCell("=1+1")).toBe("'=1+1");
    expect(csvCell("+cmd")).toBe("'+cmd");
    expect(csvCell("-2")).toBe("'-2");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell("\tx")).toBe("'\tx");
    expect(csvCell('=HYPERLINK("x","y")')).toBe(`"'=HYPERLINK(""x"",""y"")"`);
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell("line\nbreak")).toBe('"line\nbreak"');
    expect(csvCell("plain")).toBe("plain");
  });
  it("a header line and one line per event, CRLF", () => {
    const csv = orgEventsCsv([{ id: "1", at: "2026-01-01T00:00:00.000Z", type: "member-added", actorId: null, actorEmail: "=evil@example.com", ip: null, detail: { role: "member" } }]);
    expect(csv).toBe('at,type,actorId,actorEmail,ip,detail\r\n2026-01-01T00:00:00.000Z,member-added,,\'=evil@example.com,,"{""role"":""member""}"\r\n');
  });
});

describe("settings", () => {
  it("organizations are off by default; creation is open to every verified user; the system's resolvers", () => {
    const config = loadConfig(base);
    expect(config.organizations).toBe(false);
    expect(config.organizationsCreate).toBe("all");
    expect(config.dnsServers).toBeNull();
  });
  it("AUTH_ORGANIZATIONS, AUTH_ORGANIZATIONS_CREATE=admins and AUTH_DNS_SERVERS", () => {
    const config = loadConfig({ ...base, AUTH_ORGANIZATIONS: "true", AUTH_ORGANIZATIONS_CREATE: "admins", AUTH_DNS_SERVERS: "127.0.0.1:5353, 1.1.1.1,[::1]:53" });
    expect(config.organizations).toBe(true);
    expect(config.organizationsCreate).toBe("admins");
    expect(config.dnsServers).toEqual(["127.0.0.1:5353", "1.1.1.1", "[::1]:53"]);
  });
  it("bad values are reported with the variable's name", () => {
    expect(() => loadConfig({ ...base, AUTH_DNS_SERVERS: "dns.example.com" })).toThrow(/AUTH_DNS_SERVERS/);
    expect(() => loadConfig({ ...base, AUTH_ORGANIZATIONS_CREATE: "everyone" })).toThrow(/AUTH_ORGANIZATIONS_CREATE/);
    expect(() => loadConfig({ ...base, AUTH_ORGANIZATIONS: "yes" })).toThrow(/AUTH_ORGANIZATIONS/);
  });
});
