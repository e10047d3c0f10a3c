// The official MCP SDK's client against the production server's /mcp, the user in Chromium: the
// SDK finds the authorization server from /mcp's 401, registers itself (dynamic registration) and
// opens the authorization URL; the user signs in on Vestibule's page and allows the app on the
// consent page (JavaScript off: neither page needs it); the browser lands on the client's
// loopback redirect URI with a code, and the SDK gets its token and calls whoami.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { addUser, connectBrowser, newContext, startApp, type RunningApp } from "../support/browser";
import { MemoryClientProvider } from "../support/mcp-client-provider";
import { signInWithPassword } from "../support/signin-form";

const EMAIL = "mcp-user@example.com";
const PASSWORD = "mcp-browser-password-1";
let app: RunningApp;
let browser: Browser;
let callbacks: Server;
let redirectUri: string;
const codes: string[] = [];

beforeAll(async () => {
  app = await startApp({ AUTH_PROVIDER: "true", AUTH_PROVIDER_REGISTRATION: "open" });
  addUser(app, { email: EMAIL, password: PASSWORD, name: "Grace Hopper" });
  // The MCP client's loopback redirect URI (RFC 8252): it takes the code and says so.
  callbacks = createServer((req, res) => {
    const code = new URL(req.url ?? "/", "http://127.0.0.1").searchParams.get("code");
    if (code) codes.push(code);
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end("<!DOCTYPE html><title>Done</title><p id=done>You can close this window.</p>");
  });
  await new Promise<void>((resolve) => callbacks.listen(0, "127.0.0.1", resolve));
  redirectUri = `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/callback`;
  browser = await connectBrowser();
});

afterAll(async () => {
  await context?.close().catch(() => {});
  await browser?.close();
  callbacks?.closeAllConnections();
  await new Promise((resolve) => callbacks?.close(resolve));
  await app?.stop();
});

const mcp = () => new URL(`${app.url}/mcp`);
const provider = new MemoryClientProvider("Desktop MCP client", () => redirectUri);
let transport: StreamableHTTPClientTransport;
let context: BrowserContext;
let page: Page;

it("registers, and the user signs in on Vestibule's page and sees the consent page (JavaScript off)", async () => {
  transport = new StreamableHTTPClientTransport(mcp(), { authProvider: provider });
  await expect(new Client({ name: "desktop", version: "1.0.0" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.information?.client_id).toBeTruthy();
  expect(provider.opened?.searchParams.get("resource")).toBe(mcp().href);

  context = await newContext(browser, { javaScriptEnabled: false });
  page = await context.newPage();
  await page.goto(provider.opened!.href);
  // Not signed in: Vestibule's own sign-in page, then back to the authorization in progress.
  expect(new URL(page.url()).pathname).toBe("/auth/signin");
  await signInWithPassword(page, EMAIL, PASSWORD);
  await page.locator("#consent-allow").waitFor();
  expect(await page.locator("#consent-unverified").count()).toBe(1);
  expect(await page.title()).toContain("Desktop MCP client");
});

// Chromium applies the consent form's CSP form-action to every redirect that follows its POST, and
// the client's redirect URI is another origin: the way back is a page that goes on by itself
// (continueToClientPage, ADR 136), so nothing is blocked, with JavaScript on or off.
it("Allow takes the browser to the client's redirect URI with a code, and whoami answers as the user", async () => {
  // The consent page the test before left open, in the signed-in browser.
  expect(await page.locator("#consent-allow").count()).toBe(1);
  try {
    const blocked: string[] = [];
    // Either the client's page or the browser's refusal, whichever comes first.
    const refused = new Promise<void>((resolve) =>
      page.on("requestfailed", (request) => {
        blocked.push(`${request.url()}: ${request.failure()?.errorText}`);
        resolve();
      }),
    );
    await page.locator("#consent-allow").click();
    await Promise.race([page.locator("#done").waitFor(), refused]);
    expect(blocked).toEqual([]);
    expect(page.url().startsWith(redirectUri)).toBe(true);
  } finally {
    await context.close();
  }
  expect(codes).toHaveLength(1);
  await transport.finishAuth(codes[0]!);
  const client = new Client({ name: "desktop", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcp(), { authProvider: provider }));
  const result = await client.callTool({ name: "whoami", arguments: {} });
  expect(result.structuredContent).toMatchObject({ client_id: provider.information!.client_id, email: EMAIL, name: "Grace Hopper" });
  await client.close();
});
