// Every HTTP request Vestibule itself makes (OpenID discovery, token, userinfo and profile calls,
// JWKS, the password breach check) goes through outboundFetch, so that a
// company network's proxy settings apply to all of them (docs/providers.md, "Outbound requests"; the
// OAuth provider's metadata-document fetch connects directly, to the address it checked: ADR 140):
//
//   HTTPS_PROXY / https_proxy   the proxy for https: URLs (falls back to HTTP_PROXY)
//   HTTP_PROXY / http_proxy     the proxy for http: URLs
//   NO_PROXY / no_proxy         comma- or space-separated hosts reached directly: `example.com`
//                               also covers its subdomains, `.example.com` and `*.example.com`
//                               only them, `host:port` one port, `*` every host
//
// The lower-case form wins when both are set, as curl does. The variables are read at each call
// (a test or a supervisor may change them); a proxy's connection pool is kept per proxy URL.
// NODE_EXTRA_CA_CERTS needs nothing here: Node adds those certificates to the store every TLS
// connection uses, the tunnel through a proxy included.
import { fetch as undiciFetch, ProxyAgent, type Dispatcher } from "undici";

type Env = Record<string, string | undefined>;

const agents = new Map<string, ProxyAgent>();

function envValue(env: Env, name: string): string | undefined {
  const value = env[name.toLowerCase()] ?? env[name];
  return value && value.trim() ? value.trim() : undefined;
}

/** The proxy URL a request to `url` goes through, or null for a direct connection. */
export function proxyFor(url: URL, env: Env = process.env): string | null {
  const proxy = url.protocol === "https:" ? (envValue(env, "HTTPS_PROXY") ?? envValue(env, "HTTP_PROXY")) : envValue(env, "HTTP_PROXY");
  if (!proxy) return null;
  return bypassesProxy(url, envValue(env, "NO_PROXY") ?? "") ? null : proxy;
}

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443 };

/** NO_PROXY's rule (above) for one URL. */
export function bypassesProxy(url: URL, noProxy: string): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = Number(url.port) || DEFAULT_PORTS[url.protocol] || 0;
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === "*") return true;
    const { name, entryPort } = splitEntry(entry);
    if (entryPort !== null && entryPort !== port) continue;
    if (name.startsWith("*.") || name.startsWith(".")) {
      if (host.endsWith(name.replace(/^\*/, ""))) return true;
    } else if (host === name || host.endsWith(`.${name}`)) {
      return true;
    }
  }
  return false;
}

/** `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address (several colons: no port). */
function splitEntry(entry: string): { name: string; entryPort: number | null } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { name: bracketed[1]!, entryPort: bracketed[2] ? Number(bracketed[2]) : null };
  if ((entry.match(/:/g) ?? []).length > 1) return { name: entry, entryPort: null };
  const [name, p] = entry.split(":");
  return { name: name!, entryPort: p && /^\d+$/.test(p) ? Number(p) : null };
}

function dispatcherFor(url: URL): Dispatcher | undefined {
  const proxy = proxyFor(url);
  if (!proxy) return undefined;
  let agent = agents.get(proxy);
  if (!agent) {
    agent = new ProxyAgent(proxy);
    agents.set(proxy, agent);
  }
  return agent;
}

/**
 * fetch() for every outbound request: the same arguments and answer, through the proxy the
 * environment names. Through a proxy the request is made by the undici package's own fetch, the
 * same version as the ProxyAgent (Node's built-in fetch may bundle another undici); direct
 * requests stay on Node's fetch.
 */
export function outboundFetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
  const dispatcher = dispatcherFor(new URL(input));
  if (!dispatcher) return fetch(input, init);
  return undiciFetch(String(input), { ...(init as object), dispatcher } as never) as unknown as Promise<Response>;
}

/** Closes the proxies' pooled connections (tests, shutdown). */
export async function closeOutboundProxies(): Promise<void> {
  const open = [...agents.values()];
  agents.clear();
  await Promise.all(open.map((a) => a.close().catch(() => undefined)));
}
