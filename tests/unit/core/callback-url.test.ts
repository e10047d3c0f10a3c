import { describe, expect, it } from "vitest";
import { pageOfRequest, resolveCallbackUrl, toRelative, validateCallbackUrl } from "../../../app/auth/core/callback-url.server";
import { requestFor } from "../support";

const origin = "http://localhost:3000";

describe("validateCallbackUrl", () => {
  it("a crafted way back naming a page's data request (.data, _routes, index) leads to the page itself", () => {
    const origin = "http://localhost:3000";
    expect(validateCallbackUrl("/examples/profile.data", origin)).toBe(`${origin}/examples/profile`);
    expect(validateCallbackUrl("/examples/profile.data?_routes=routes%2Fexamples%2Fprofile&tab=2", origin)).toBe(`${origin}/examples/profile?tab=2`);
    expect(validateCallbackUrl("/account?index=", origin)).toBe(`${origin}/account`);
    expect(validateCallbackUrl("/_root.data", origin)).toBe(`${origin}/`);
    expect(validateCallbackUrl(`${origin}/notes.data?index&q=a#top`, origin)).toBe(`${origin}/notes?q=a#top`);
  });

  it.each([
    ["/account", `${origin}/account`],
    ["/a?b=c#d", `${origin}/a?b=c#d`],
    [`${origin}/x`, `${origin}/x`],
  ])("allows %s", (value, expected) => {
    expect(validateCallbackUrl(value, origin)).toBe(expected);
  });

  it.each([
    "//evil.example/x",
    "/\\evil.example",
    "/\t/evil.example",
    "/.//evil.example",
    "/a/..//evil.example",
    "http://localhost:3000//evil.example",
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    "data:text/html,hi",
    "https://evil.example/",
    "http://localhost:3001/",
    "https://localhost:3000/",
    "http://user:pw@localhost:3000/",
    "relative/path",
    "",
    "/" + "a".repeat(3000),
    123,
    null,
  ])("rejects %s", (value) => {
    expect(validateCallbackUrl(value, origin)).toBeNull();
  });
});

describe("toRelative", () => {
  it("never produces a protocol-relative reference", () => {
    expect(toRelative("http://localhost:3000/a?b#c")).toBe("/a?b#c");
    expect(toRelative("http://localhost:3000//evil.example/x")).toBe("/evil.example/x");
  });
});

describe("resolveCallbackUrl", () => {
  it("prefers the body, then the query, then the cookie, and sets the cookie for an explicit value", () => {
    const ar = requestFor(`${origin}/auth/signin?callbackUrl=/from-query`, { cookies: { "authjs.callback-url": `${origin}/from-cookie` } });
    expect(resolveCallbackUrl(ar, { callbackUrl: "/from-body" }).url).toBe(`${origin}/from-body`);
    const fromQuery = resolveCallbackUrl(ar);
    expect(fromQuery.url).toBe(`${origin}/from-query`);
    expect(fromQuery.setCookie).toMatch(/^authjs\.callback-url=http%3A%2F%2Flocalhost%3A3000%2Ffrom-query;/);
    const cookieOnly = requestFor(`${origin}/auth/signin`, { cookies: { "authjs.callback-url": `${origin}/from-cookie` } });
    expect(resolveCallbackUrl(cookieOnly)).toEqual({ url: `${origin}/from-cookie`, setCookie: null });
  });

  it("replaces an invalid explicit value with / instead of falling back to the cookie", () => {
    const ar = requestFor(`${origin}/auth/signin?callbackUrl=javascript:alert(1)`, { cookies: { "authjs.callback-url": `${origin}/kept` } });
    expect(resolveCallbackUrl(ar).url).toBe(`${origin}/`);
  });

  it("validates the stored cookie again when it is used", () => {
    const ar = requestFor(`${origin}/auth/signin`, { cookies: { "authjs.callback-url": "https://evil.example/" } });
    expect(resolveCallbackUrl(ar).url).toBe(`${origin}/`);
  });
});

describe("pageOfRequest: the one way back to the page a request is for", () => {
  it.each([
    ["/_root.data?index&_routes=root", "/"],
    ["/_root.data", "/"],
    ["/account.data?_routes=routes%2Faccount", "/account"],
    ["/account.data?updated=x&index&_routes=routes%2Faccount", "/account?updated=x"],
    ["/?index", "/"],
    ["/account?x=1", "/account?x=1"],
    ["/admin/users/u1.data?index&_routes=root%2Croutes%2Fnot-found", "/admin/users/u1"],
  ])("%s comes back to %s", (path, page) => {
    expect(pageOfRequest(new URL(path, "https://app.example"))).toBe(page);
  });
});
