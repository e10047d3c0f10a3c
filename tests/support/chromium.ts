// The system Chromium the browser tests drive (playwright-core brings no browser of its own) and
// the switches that keep it quiet and lean in a container. One place for both: the run's shared
// browser (tests/support/browser-server.ts) and anything that launches one of its own.
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  "--renderer-process-limit=4",
];
