// Which address a request comes from (docs/decisions/025-client-address.md).
//
// The chain is every X-Forwarded-For entry (all header lines, in order) followed by the TCP peer.
// Each proxy appends the address it saw, so only entries that trusted proxies wrote can be
// believed; anything further left is whatever the client chose to send. Walking from the peer
// leftwards, each hop that is a trusted proxy vouches for the entry on its left; the client is the
// first hop that is not a trusted proxy. A malformed entry stops the walk: the proxy that wrote it
// did not say who its peer was, so it is the client (never an entry left of the garbage).
import { BlockList, isIP, isIPv4, isIPv6 } from "node:net";

export type TrustedProxies =
  /** The nearest `hops` hops (the TCP peer first) are proxies, whatever their addresses. */
  | { hops: number }
  /** Peers inside these ranges are proxies. */
  | { ranges: string[]; list: BlockList };

export const MAX_PROXY_HOPS = 32;

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d, any spelling) as plain IPv4. */
function unmapIPv4(canonicalV6: string): string | null {
  const match = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonicalV6);
  if (!match) return null;
  const hi = parseInt(match[1]!, 16);
  const lo = parseInt(match[2]!, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}

/** An IPv6 literal in its RFC 5952 form, as the WHATWG URL parser writes it (zone id dropped). */
function canonicalIPv6(address: string): string {
  return new URL(`http://[${address.replace(/%.*$/, "")}]/`).hostname.slice(1, -1);
}

/**
 * One address as written by a socket or a proxy — `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`,
 * `[2001:db8::1]`, `[2001:db8::1]:443` — in one canonical spelling (IPv4-mapped IPv6 as IPv4), or
 * null when it is not an IP address. Leading zeros in IPv4 are refused, never read as octal.
 */
export function normalizeAddress(raw: string): string | null {
  let value = raw.trim();
  if (value.length === 0 || value.length > 64) return null;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(value);
  if (bracketed) value = bracketed[1]!;
  else if (/^[0-9.]+:\d{1,5}$/.test(value)) value = value.slice(0, value.indexOf(":"));
  if (isIPv4(value)) return value;
  if (!isIPv6(value)) return null;
  let v6: string;
  try {
    v6 = canonicalIPv6(value);
  } catch {
    return null;
  }
  return unmapIPv4(v6) ?? v6;
}

/**
 * AUTH_TRUSTED_PROXIES: a hop count alone (`1`), or a comma list of addresses and CIDRs of either
 * family. Returns the parsed value or what is wrong with it.
 */
export function parseTrustedProxies(value: string): { proxies: TrustedProxies } | { problem: string } {
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops < 1 || hops > MAX_PROXY_HOPS) return { problem: `must be a hop count between 1 and ${MAX_PROXY_HOPS} (got "${text}")` };
    return { proxies: { hops } };
  }
  const list = new BlockList();
  const ranges: string[] = [];
  for (const entry of text.split(",").map((s) => s.trim())) {
    if (!entry) return { problem: `has an empty entry (got "${text}")` };
    const [written = "", prefixText, ...rest] = entry.split("/");
    const address = isIP(written) && rest.length === 0 ? normalizeAddress(written) : null;
    if (!address) {
      return { problem: `entry "${entry}" is not an IP address or CIDR (use a hop count such as 1 alone, or a list such as 10.0.0.0/8, ::1)` };
    }
    const family = isIPv4(address) ? "ipv4" : "ipv6";
    if (prefixText === undefined) {
      list.addAddress(address, family);
      ranges.push(address);
      continue;
    }
    // An IPv4-mapped range (::ffff:10.0.0.0/104) is the IPv4 range 10.0.0.0/8.
    const mapped = family === "ipv4" && !isIPv4(written);
    const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) - (mapped ? 96 : 0) : NaN;
    const maxPrefix = family === "ipv4" ? 32 : 128;
    if (!(prefix >= 0 && prefix <= maxPrefix)) {
      return { problem: `entry "${entry}" has a prefix length that is not between ${mapped ? 96 : 0} and ${mapped ? 128 : maxPrefix}` };
    }
    list.addSubnet(address, prefix, family);
    ranges.push(`${address}/${prefix}`);
  }
  return { proxies: { ranges, list } };
}

function isTrusted(proxies: TrustedProxies, address: string, hop: number): boolean {
  if ("hops" in proxies) return hop < proxies.hops;
  return proxies.list.check(address, isIPv4(address) ? "ipv4" : "ipv6");
}

/**
 * The client's address: the peer's without trusted proxies; with them, the walk described at the
 * top of this file. `forwardedFor` is the X-Forwarded-For header with every line joined by commas
 * (as both node:http and the Fetch Headers object join them). Null when the peer is unknown.
 */
export function selectClientAddress(peer: string | null, forwardedFor: string | null, proxies: TrustedProxies | null): string | null {
  let client = peer === null ? null : normalizeAddress(peer);
  if (client === null || proxies === null || !forwardedFor) return client;
  const entries = forwardedFor.split(",");
  let hop = 0;
  for (let i = entries.length - 1; i >= 0 && isTrusted(proxies, client, hop); i--) {
    const entry = entries[i]!;
    // An empty item is an artefact of joining lines (",,"), not a hop.
    if (entry.trim() === "") continue;
    const address = normalizeAddress(entry);
    if (address === null) break;
    client = address;
    hop++;
  }
  return client;
}

/**
 * What the limits count a client address as (never the audit trail or sessions,
 * which keep the whole address): an IPv4 address itself, an IPv6 address its /64. One subscriber
 * or host gets a whole /64 and may use any address in it (privacy extensions rotate them on their
 * own), so counting single IPv6 addresses would give one machine 2^64 budgets. `address` is a
 * normalizeAddress result.
 */
export function limitClientKey(address: string): string {
  if (!isIPv6(address)) return address;
  const [head = "", tail] = address.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  if (groups.length !== 8 || !groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return address;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}
