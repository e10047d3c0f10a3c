// Set-up many integration files repeat, in one place: the app's in-process request handler for the
// file's tests, and settings changed for one test and put back after it.
import { afterEach, beforeAll } from "vitest";
import { appHandler } from "./app-handler";
import { withEnv } from "./auth";

/**
 * `setEnv` for this file's tests: `setEnv({ AUTH_SITE_NAME: "Acme" })` changes settings (the
 * configuration is read again) for the test that calls it; after each test every change is undone,
 * the last first. A test may call it more than once.
 */
export function envPerTest(): (vars: Record<string, string | undefined>) => void {
  const undo: (() => void)[] = [];
  afterEach(() => {
    while (undo.length > 0) undo.pop()!();
  });
  return (vars) => {
    undo.push(withEnv(vars));
  };
}

/** The whole app as one Request → Response function (tests/support/app-handler.ts), built before the file's tests. */
export function useAppHandler(): (request: Request) => Promise<Response> {
  let handle: ((request: Request) => Promise<Response>) | undefined;
  beforeAll(async () => {
    handle = await appHandler();
  });
  return (request) => {
    if (!handle) throw new Error("useAppHandler(): the handler is built in beforeAll; call it from a test or a hook");
    return handle(request);
  };
}
