// Which proxy an outbound request goes through (app/auth/core/outbound-fetch.server.ts): the
// scheme's variable, lower case first, and NO_PROXY's hosts, subdomains, ports and `*`; and no
// server code calls fetch() around it (docs/decisions/123).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { bypassesProxy, proxyFor } from "../../../app/auth/core/outbound-fetch.server";

const u = (s: string) => new URL(s);

describe("proxyFor", () => {
  it("https: takes HTTPS_PROXY, else HTTP_PROXY; http: only HTTP_PROXY; lower case wins", () => {
    expect(proxyFor(u("https://a.example"), {})).toBeNull();
    expect(proxyFor(u("https://a.example"), { HTTPS_PROXY: "http://p1:3128" })).toBe("http://p1:3128");
    expect(proxyFor(u("https://a.example"), { HTTP_PROXY: "http://p2:3128" })).toBe("http://p2:3128");
    expect(proxyFor(u("http://a.example"), { HTTPS_PROXY: "http://p1:3128" })).toBeNull();
    expect(proxyFor(u("http://a.example"), { HTTP_PROXY: "http://p2:3128" })).toBe("http://p2:3128");
    expect(proxyFor(u("https://a.example"), { HTTPS_PROXY: "http://upper:1", https_proxy: "http://lower:1" })).toBe("http://lower:1");
    expect(proxyFor(u("https://a.example"), { HTTPS_PROXY: "  " })).toBeNull();
  });

  it("NO_PROXY (or no_proxy) sends the hosts it names direct", () => {
    const env = { HTTPS_PROXY: "http://p:3128", no_proxy: "internal.example, 10.0.0.7" };
    expect(proxyFor(u("https://sso.internal.example/x"), env)).toBeNull();
    expect(proxyFor(u("https://10.0.0.7/x"), env)).toBeNull();
    expect(proxyFor(u("https://accounts.google.com"), env)).toBe("http://p:3128");
  });
});

describe("bypassesProxy", () => {
  it("a name covers itself and its subdomains; a leading dot or *. only the subdomains", () => {
    expect(bypassesProxy(u("https://example.com"), "example.com")).toBe(true);
    expect(bypassesProxy(u("https://a.b.example.com"), "example.com")).toBe(true);
    expect(bypassesProxy(u("https://notexample.com"), "example.com")).toBe(false);
    expect(bypassesProxy(u("https://example.com"), ".example.com")).toBe(false);
    expect(bypassesProxy(u("https://a.example.com"), ".example.com")).toBe(true);
    expect(bypassesProxy(u("https://a.example.com"), "*.example.com")).toBe(true);
  });

  it("a port limits the entry to it; * bypasses everything; IPv6 with and without brackets", () => {
    expect(bypassesProxy(u("https://example.com"), "example.com:443")).toBe(true);
    expect(bypassesProxy(u("https://example.com:8443"), "example.com:443")).toBe(false);
    expect(bypassesProxy(u("http://example.com"), "example.com:80")).toBe(true);
    expect(bypassesProxy(u("https://anything.example"), "*")).toBe(true);
    expect(bypassesProxy(u("http://[::1]:8080/"), "::1")).toBe(true);
    expect(bypassesProxy(u("http://[::1]:8080/"), "[::1]:8080")).toBe(true);
    expect(bypassesProxy(u("http://[::1]:8080/"), "[::1]:9090")).toBe(false);
    expect(bypassesProxy(u("https://Example.COM"), " EXAMPLE.com ,other")).toBe(true);
    expect(bypassesProxy(u("https://example.com"), "")).toBe(false);
  });
});

describe("one outbound fetch", () => {
  it("no server module but outbound-fetch.server.ts calls fetch() itself", () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
    const serverFiles = [
      ...readdirSync(path.join(root, "app"), { recursive: true, encoding: "utf8" }).filter((f) => /\.server\.tsx?$/.test(f)).map((f) => path.join("app", f)),
      ...readdirSync(path.join(root, "server"), { recursive: true, encoding: "utf8" }).filter((f) => /\.tsx?$/.test(f)).map((f) => path.join("server", f)),
    ];
    expect(serverFiles.length).toBeGreaterThan(50);
    const callers = serverFiles.filter((f) => {
      const code = readFileSync(path.join(root, f), "utf8").replace(/^\s*(\/\/|\/\*|\*).*$/gm, "");
      return /(?<![\w.])(?:globalThis\.)?fetch\(/.test(code);
    });
    expect(callers).toEqual(["app/auth/core/outbound-fetch.server.ts"]);
  });
});
