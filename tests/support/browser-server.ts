// Global setup of the browser project: ONE Chromium for the whole run. Launching the browser is
// the costliest step a browser test file had of its own (a second of CPU or more on a loaded
// machine, once per file); now every file connects to this one (tests/support/browser.ts
// openBrowser) and opens its own contexts, which share no cookies, storage or pages, so files
// running side by side stay independent. docs/decisions/065-test-suite-speed.md
import { chromium } from "playwright-core";
import type { TestProject } from "vitest/node";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./chromium.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The Playwright endpoint of the run's Chromium (chromium.connect). */
    vestibuleBrowserEndpoint: string;
    /** Why there is no endpoint ("" when there is one). */
    vestibuleBrowserError: string;
  }
}

export default async function startBrowserServer(project: TestProject) {
  let server: Awaited<ReturnType<typeof chromium.launchServer>>;
  try {
    server = await chromium.launchServer({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  } catch (e) {
    // No Chromium: the files that need one fail with this reason (connectBrowser); the rest of
    // the run (servers over HTTP, the other projects) still runs.
    project.provide("vestibuleBrowserEndpoint", "");
    project.provide("vestibuleBrowserError", `Chromium at ${CHROMIUM_PATH} did not start: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  project.provide("vestibuleBrowserEndpoint", server.wsEndpoint());
  project.provide("vestibuleBrowserError", "");
  return async () => {
    await server.close();
  };
}
