// The client address (docs/decisions/025-client-address.md): the TCP peer's unless
// AUTH_TRUSTED_PROXIES says which peers are proxies; then the rightmost X-Forwarded-For entry that
// is not a trusted proxy. The leftmost entries are whatever the client wrote.
import { describe, expect, it } from "vitest";
import { limitClientKey } from "../../../app/auth/core/client-address.server";
import { ConfigError } from "../../../app/auth/core/config.server";
import { clientAddress } from "../../../app/auth/core/request.server";
import { requestFor, testConfig } from "../support";

/** The address a request with this peer and these X-Forwarded-For lines gets under `env`. */
function addressOf(env: Record<string, string>, peer: string | null, ...forwardedFor: string[]) {
  const headers = new Headers();
  if (peer !== null) headers.set("X-Vestibule-Remote-Addr", peer);
  for (const line of forwardedFor) headers.append("X-Forwarded-For", line);
  return clientAddress(requestFor("http://localhost:3000/auth/session", { headers }, testConfig(env)));
}

function problems(value: string) {
  try {
    testConfig({ AUTH_TRUSTED_PROXIES: value });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("without AUTH_TRUSTED_PROXIES", () => {
  it("is the TCP peer's address, whatever X-Forwarded-For says", () => {
    expect(addressOf({}, "203.0.113.7", "198.51.100.1")).toBe("203.0.113.7");
  });

  it("AUTH_TRUST_HOST alone never believes X-Forwarded-For", () => {
    expect(addressOf({ AUTH_TRUST_HOST: "true", AUTH_ALLOWED_HOSTS: "localhost" }, "203.0.113.7", "198.51.100.1")).toBe("203.0.113.7");
    expect(addressOf({ AUTH_TRUST_HOST: "true", AUTH_ALLOWED_HOSTS: "localhost" }, null, "198.51.100.1")).toBeNull();
  });

  it("writes an IPv4-mapped IPv6 peer as IPv4 and IPv6 in its canonical form", () => {
    expect(addressOf({}, "::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressOf({}, "::FFFF:cb00:7107")).toBe("203.0.113.7");
    expect(addressOf({}, "2001:DB8:0:0:0:0:0:1")).toBe("2001:db8::1");
  });

  it("is unknown (null) when the peer is missing or not an address", () => {
    expect(addressOf({}, null)).toBeNull();
    expect(addressOf({}, "")).toBeNull();
    expect(addressOf({}, "not-an-address")).toBeNull();
  });
});

describe("AUTH_TRUSTED_PROXIES as addresses and CIDRs", () => {
  const env = { AUTH_TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.1, 2001:db8:ffff::/48, ::1" };

  it("is the rightmost entry that is not a trusted proxy; the spoofed leftmost ones are ignored", () => {
    expect(addressOf(env, "10.0.0.1", "203.0.113.7")).toBe("203.0.113.7");
    expect(addressOf(env, "10.0.0.1", "1.1.1.1, 6.6.6.6, 203.0.113.7")).toBe("203.0.113.7");
    // Two trusted proxies in a row, the nearer one IPv6.
    expect(addressOf(env, "::1", "6.6.6.6, 203.0.113.7, 10.9.8.7")).toBe("203.0.113.7");
    expect(addressOf(env, "2001:db8:ffff::5", "6.6.6.6, 2001:db8:1::42, 192.0.2.1")).toBe("2001:db8:1::42");
  });

  it("a spoofed entry naming a trusted proxy does not move the answer past the real client", () => {
    expect(addressOf(env, "10.0.0.1", "10.0.0.2, 203.0.113.7")).toBe("203.0.113.7");
  });

  it("reads several X-Forwarded-For header lines in order, as one list", () => {
    expect(addressOf(env, "10.0.0.1", "6.6.6.6", "203.0.113.7, 10.0.0.3")).toBe("203.0.113.7");
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", () => {
    expect(addressOf(env, "203.0.113.7", "198.51.100.1")).toBe("203.0.113.7");
    expect(addressOf(env, "::ffff:203.0.113.7", "198.51.100.1")).toBe("203.0.113.7");
  });

  it("matches an IPv4-mapped peer against IPv4 ranges", () => {
    expect(addressOf(env, "::ffff:10.1.2.3", "203.0.113.7")).toBe("203.0.113.7");
  });

  it("accepts entries with ports and brackets, and normalises them", () => {
    expect(addressOf(env, "10.0.0.1", "203.0.113.7:51234")).toBe("203.0.113.7");
    expect(addressOf(env, "10.0.0.1", "[2001:DB8::7]:443")).toBe("2001:db8::7");
    expect(addressOf(env, "10.0.0.1", "[2001:db8::8]")).toBe("2001:db8::8");
    expect(addressOf(env, "10.0.0.1", "::ffff:203.0.113.9")).toBe("203.0.113.9");
  });

  it("stops at a malformed entry: the hop that reported it is the client, never an entry left of it", () => {
    expect(addressOf(env, "10.0.0.1", "6.6.6.6, unknown")).toBe("10.0.0.1");
    expect(addressOf(env, "10.0.0.1", "6.6.6.6, 01.2.3.4")).toBe("10.0.0.1");
    expect(addressOf(env, "10.0.0.1", "6.6.6.6, 10.0.0.2, garbage, 10.0.0.3")).toBe("10.0.0.3");
    expect(addressOf(env, "10.0.0.1", "6.6.6.6,,203.0.113.7")).toBe("203.0.113.7");
  });

  it("is the leftmost address when every hop is a trusted proxy", () => {
    expect(addressOf(env, "10.0.0.1", "10.0.0.9, 192.0.2.1")).toBe("10.0.0.9");
    expect(addressOf(env, "10.0.0.1")).toBe("10.0.0.1");
    expect(addressOf(env, "10.0.0.1", "")).toBe("10.0.0.1");
  });

  it("is unknown when the peer is missing", () => {
    expect(addressOf(env, null, "203.0.113.7")).toBeNull();
  });
});

describe("AUTH_TRUSTED_PROXIES as a hop count", () => {
  it("1: the TCP peer is the proxy and the client is the last X-Forwarded-For entry", () => {
    const env = { AUTH_TRUSTED_PROXIES: "1" };
    expect(addressOf(env, "10.0.0.1", "6.6.6.6, 1.1.1.1, 203.0.113.7")).toBe("203.0.113.7");
    expect(addressOf(env, "10.0.0.1", "6.6.6.6", "2001:db8::7")).toBe("2001:db8::7");
    expect(addressOf(env, "198.51.100.1", "203.0.113.7")).toBe("203.0.113.7");
  });

  it("2: two proxies; the client is the second entry from the right", () => {
    const env = { AUTH_TRUSTED_PROXIES: "2" };
    expect(addressOf(env, "10.0.0.1", "6.6.6.6, 203.0.113.7, 10.0.0.2")).toBe("203.0.113.7");
  });

  it("with fewer entries than hops, the leftmost address; a malformed entry stops the count", () => {
    expect(addressOf({ AUTH_TRUSTED_PROXIES: "3" }, "10.0.0.1", "203.0.113.7")).toBe("203.0.113.7");
    expect(addressOf({ AUTH_TRUSTED_PROXIES: "1" }, "10.0.0.1")).toBe("10.0.0.1");
    expect(addressOf({ AUTH_TRUSTED_PROXIES: "2" }, "10.0.0.1", "6.6.6.6, 203.0.113.7, nonsense")).toBe("10.0.0.1");
  });
});

describe("AUTH_TRUSTED_PROXIES validation", () => {
  it("accepts hop counts, addresses and CIDRs of both families", () => {
    expect(problems("1")).toEqual([]);
    expect(problems("10.0.0.0/8,172.16.0.0/12, 127.0.0.1 ,::1, fd00::/8, ::ffff:10.0.0.1")).toEqual([]);
  });

  it.each([
    ["0", "a hop count between 1 and 32"],
    ["33", "a hop count between 1 and 32"],
    ["1.5", "not an IP address"],
    ["10.0.0.0/33", "prefix"],
    ["fd00::/129", "prefix"],
    ["10.0.0.0/x", "prefix"],
    ["example.com", "not an IP address"],
    ["10.0.0.1,,10.0.0.2", "empty entry"],
    ["1,10.0.0.1", "not an IP address"],
    ["999.0.0.1", "not an IP address"],
  ])("refuses %j, naming the variable", (value, why) => {
    const found = problems(value);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^AUTH_TRUSTED_PROXIES /);
    expect(found[0]).toContain(why);
  });

  it("unset or empty means no proxies", () => {
    expect(testConfig({}).trustedProxies).toBeNull();
    expect(testConfig({ AUTH_TRUSTED_PROXIES: "" }).trustedProxies).toBeNull();
  });
});

describe("limitClientKey: what the limits count a client as", () => {
  it.each([
    ["192.0.2.1", "192.0.2.1"],
    ["2001:db8:a:b:1:2:3:4", "2001:db8:a:b::/64"],
    ["2001:db8:a:b::", "2001:db8:a:b::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["2001:db8:0:0:ffff::1", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["fe80::1:2", "fe80:0:0:0::/64"],
    ["2001:db8:a:b:c:d:e:f", "2001:db8:a:b::/64"],
    ["2001:db8:a:c::1", "2001:db8:a:c::/64"],
  ])("%s → %s", (address, key) => {
    expect(limitClientKey(address)).toBe(key);
  });

  it("gives every address of one /64 the same key, and neighbouring /64s their own", () => {
    const one = new Set(["2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2:abcd::9"].map(limitClientKey));
    expect(one.size).toBe(1);
    expect(limitClientKey("2001:db8:1:3::1")).not.toBe(limitClientKey("2001:db8:1:2::1"));
  });
});
