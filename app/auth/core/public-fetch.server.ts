// A GET of a URL that someone else named (an OAuth client's metadata document, ADR 140; a SAML
// identity provider's metadata, ADR 167), guarded against server-side request forgery:
// - https: only (plain http exists only behind a caller's test seam, which production refuses);
// - the host is resolved here and the whole answer refused if any address is not a public unicast
//   one (private, loopback, link-local, unique-local, shared, documentation, multicast,
//   IPv4-mapped, NAT64, 6to4, Teredo, …), then the connection goes to the address checked — the
//   name is not resolved a second time, so a rebinding DNS answer cannot slip in between — while
//   TLS still checks the certificate against the host name (SNI and Host carry the name);
// - no redirect is followed, the whole fetch ends within the caller's deadline, and at most the
//   caller's number of bytes is read.
// It connects directly, never through a proxy (outbound-fetch.server.ts): the address checked is
// the address reached.
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { BlockList, isIP, type LookupFunction } from "node:net";

/** Why a fetch failed. */
export type PublicFetchFailure = "invalid_url" | "forbidden_address" | "unresolvable" | "timeout" | "too_large" | "redirect" | "bad_status" | "network";

export class PublicFetchError extends Error {
  constructor(
    readonly reason: PublicFetchFailure,
    detail?: string,
  ) {
    super(detail ? `${reason}: ${detail}` : reason);
    this.name = "PublicFetchError";
  }
}

/** IPv4 ranges that are not the public internet (IANA special-purpose registry and multicast). */
const BLOCKED_V4: ReadonlyArray<[string, number]> = [
  ["0.0.0.0", 8], // "this network", 0.0.0.0
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // shared address space (carrier-grade NAT)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata services live here)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.31.196.0", 24], // AS112
  ["192.52.193.0", 24], // AMT
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["192.175.48.0", 24], // AS112
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and 255.255.255.255
];

/** Inside IPv6 global unicast (2000::/3, the only block allowed), the parts that are not public. */
const BLOCKED_V6_IN_GLOBAL: ReadonlyArray<[string, number]> = [
  ["2001::", 23], // IETF protocol assignments (Teredo 2001::/32, benchmarking, ORCHID, …)
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4: embeds an IPv4 address that may be private
  ["2620:4f:8000::", 48], // AS112
  ["3fff::", 20], // documentation
];

const blockedV4 = new BlockList();
for (const [net, prefix] of BLOCKED_V4) blockedV4.addSubnet(net, prefix, "ipv4");
const globalV6 = new BlockList();
globalV6.addSubnet("2000::", 3, "ipv6");
const blockedV6 = new BlockList();
for (const [net, prefix] of BLOCKED_V6_IN_GLOBAL) blockedV6.addSubnet(net, prefix, "ipv6");

/**
 * True only for a public unicast address. IPv6 outside 2000::/3 (loopback ::1, unspecified ::,
 * IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, discard 100::/64, unique-local fc00::/7,
 * link-local fe80::/10, multicast ff00::/8, …) is never public.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blockedV4.check(address, "ipv4");
  if (family === 6) {
    const bare = address.split("%")[0]!; // a zone index (fe80::1%eth0) is link-local anyway
    if (isIP(bare) !== 6) return false;
    return globalV6.check(bare, "ipv6") && !blockedV6.check(bare, "ipv6");
  }
  return false;
}

export type ResolvedAddress = { address: string; family: 4 | 6 };
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * What tests may change, and only outside production (each caller's setter refuses it there):
 * - `resolve`: a fake name resolver (its answers are still checked by isPublicAddress);
 * - `allowHttp`: fetch http: URLs too (local test servers have no certificate);
 * - `connectTo`: where to open the connection for a checked address (tests point every public
 *   address at their local server; the check has already passed on the address resolved);
 * - `timeoutMs`: a shorter deadline, so a slow-body test ends soon;
 * - `ca`: the certificate authority trusted instead of the system's (a local https: server's test CA).
 */
export type PublicFetchSeam = {
  resolve?: Resolver;
  allowHttp?: boolean;
  connectTo?: (checked: ResolvedAddress) => ResolvedAddress;
  timeoutMs?: number;
  ca?: string;
};

const systemResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

async function resolveChecked(hostname: string, seam: PublicFetchSeam | null): Promise<ResolvedAddress> {
  const literal = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
  const family = isIP(literal);
  let answers: ResolvedAddress[];
  if (family) {
    answers = [{ address: literal, family: family as 4 | 6 }];
  } else {
    try {
      answers = await (seam?.resolve ?? systemResolver)(hostname);
    } catch {
      throw new PublicFetchError("unresolvable", hostname);
    }
  }
  if (answers.length === 0) throw new PublicFetchError("unresolvable", hostname);
  // Every answer must be public: an attacker's name could list a public and a private address.
  const refused = answers.find((a) => !isPublicAddress(a.address));
  if (refused) throw new PublicFetchError("forbidden_address", refused.address);
  return answers[0]!;
}

/**
 * Whether `hostname` (a name or a literal address) resolves to public unicast addresses only,
 * within `timeoutMs`: PublicFetchError ("forbidden_address", "unresolvable", "timeout") otherwise.
 * For a caller whose fetch goes through another client (oauth4webapi's discovery): the check before
 * it, not the pinned connection fetchPublic makes.
 */
export async function checkPublicHost(hostname: string, timeoutMs: number, seam: PublicFetchSeam | null = null): Promise<void> {
  const deadline = AbortSignal.timeout(timeoutMs);
  await Promise.race([
    resolveChecked(hostname, seam),
    new Promise<never>((_, reject) => deadline.addEventListener("abort", () => reject(new PublicFetchError("timeout")), { once: true })),
  ]);
}

export type PublicFetchOptions = { maxBytes: number; timeoutMs: number; accept: string; userAgent: string; seam?: PublicFetchSeam | null };
export type PublicFetched = { body: Buffer; cacheControl: string | null; contentType: string | null };

/** GET `href` under the rules above: the body (at most `maxBytes`) of a 200 answer, or PublicFetchError. */
export async function fetchPublic(href: string, options: PublicFetchOptions): Promise<PublicFetched> {
  const seam = options.seam ?? null;
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw new PublicFetchError("invalid_url");
  }
  const secure = url.protocol === "https:";
  if (!secure && !(seam?.allowHttp && url.protocol === "http:")) throw new PublicFetchError("invalid_url");
  if (url.username || url.password) throw new PublicFetchError("invalid_url");

  const deadline = AbortSignal.timeout(seam?.timeoutMs ?? options.timeoutMs);
  const checked = await Promise.race([
    resolveChecked(url.hostname, seam),
    new Promise<never>((_, reject) => deadline.addEventListener("abort", () => reject(new PublicFetchError("timeout")), { once: true })),
  ]);
  const target = seam?.connectTo ? seam.connectTo(checked) : checked;
  // The connection goes to the checked address only: this lookup answers the socket's own
  // resolution (TLS still verifies the certificate for url.hostname, which is also the SNI name).
  const lookup: LookupFunction = (_host, lookupOptions, callback) => {
    if (lookupOptions.all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };

  return await new Promise<PublicFetched>((resolve, reject) => {
    deadline.addEventListener("abort", () => reject(new PublicFetchError("timeout")), { once: true });
    const request = (secure ? https : http).request(
      {
        protocol: url.protocol,
        host: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers: { Accept: options.accept, Host: url.host, "User-Agent": options.userAgent },
        servername: isIP(url.hostname) ? undefined : url.hostname,
        ...(secure && seam?.ca ? { ca: seam.ca } : {}),
        lookup,
        agent: false,
        signal: deadline,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          response.destroy();
          return reject(new PublicFetchError("redirect", String(status)));
        }
        if (status !== 200) {
          response.destroy();
          return reject(new PublicFetchError("bad_status", String(status)));
        }
        const declared = Number(response.headers["content-length"]);
        if (Number.isFinite(declared) && declared > options.maxBytes) {
          response.destroy();
          return reject(new PublicFetchError("too_large"));
        }
        const chunks: Buffer[] = [];
        let length = 0;
        response.on("data", (chunk: Buffer) => {
          length += chunk.length;
          if (length > options.maxBytes) {
            response.destroy();
            reject(new PublicFetchError("too_large"));
            return;
          }
          chunks.push(chunk);
        });
        response.on("error", () => reject(deadline.aborted ? new PublicFetchError("timeout") : new PublicFetchError("network")));
        response.on("end", () => resolve({ body: Buffer.concat(chunks), cacheControl: response.headers["cache-control"] ?? null, contentType: response.headers["content-type"] ?? null }));
      },
    );
    request.on("error", (error) => reject(deadline.aborted ? new PublicFetchError("timeout") : new PublicFetchError("network", error.message)));
    request.end();
  });
}
