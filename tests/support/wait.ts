// Waiting for a state, never for a clock. A test that sleeps a fixed time passes on a quiet
// machine and fails on a loaded one (or wastes the time on both); one that waits for the state it
// needs takes as long as the machine takes. The only deadline is the test's own timeout, which
// is generous (vite.config.ts). docs/decisions/065-test-suite-speed.md

/**
 * Calls `probe` until `done` accepts what it returned, then returns that. Between two calls it
 * waits `everyMs` so the thing asked (a server, a log) is not flooded; there is no attempt limit.
 */
export async function waitUntil<T>(probe: () => T | Promise<T>, done: (value: T) => boolean, { everyMs = 50 } = {}): Promise<T> {
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
