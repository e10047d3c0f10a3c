// bench/summary.ts: what `npm run bench` commits (bench/results/<date>.json) is a summary of the
// raw results (bench/results/raw/, ignored by git): the figures and verdicts, a few hundred lines.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { summaryText, writeResults, type RawResults } from "../../../bench/summary";

const measurement = (name: string, rps: number, extra: object = {}, entries = 20_000) => ({
  name,
  server: "jwt app",
  rps,
  p50: 1.0712345,
  p99: 2.4321987,
  errors: 0,
  requests: Math.round(rps * 5),
  cpuUs: 72.77359650921018,
  rssMb: 132.5703125,
  seconds: 5.001122738000001,
  cpuTotalUs: 4970000,
  stealMs: 0,
  generatorDelayMs: { p99: 1.28, max: 5.29 },
  // What a run keeps to merge rounds: tens of thousands of entries.
  hist: Array.from({ length: entries }, (_, i) => [i * 10, 3] as [number, number]),
  latencies: Array.from({ length: entries }, (_, i) => i / 1000),
  ...extra,
});

/** A run's raw results; `entries` in each latency histogram and list of latencies. */
function raw(entries = 20_000): RawResults {
  const results: RawResults["results"] = {
    sessionJwt: measurement("GET /auth/session (jwt)", 13655.733637785394, {}, entries),
    trivial: measurement("trivial React Router resource route", 6374.216754093058, {}, entries),
  };
  for (let i = 0; i < 30; i++) results[`scenario${i}HalfRateOpen`] = measurement(`scenario ${i} at half rate`, 5000 + i, { rate: 5133 }, entries);
  return {
    date: "2026-11-26T18:21:10.824Z",
    conditions: { cores: 2, pinned: true, node: "v22.23.3", seconds: 5, connections: 16, loadAverageBefore: "0.67 0.99 1.07", loadAverageAfter: "1.39 1.22 1.15", startCommand: { env: {}, flags: [] } },
    results,
    notes: {
      halfRateMeasuredAgain: [{ key: "csrfHalfRateOpen", rate: 6317, p99: 17.2, generatorStallMs: 14.71 }],
      coldStartMs: { freshDataFolder: 735.603655999992, restarts: [648.2840790000046], cpuMs: [650, 630] },
      allocationBytesPerRequest: { "GET /auth/session (jwt)": 28770 },
    },
    targets: {
      "session jwt ≥ 6× Auth.js": { value: 8.133027166649509, target: 6, met: true },
      "p99 at half rate, csrfHalfRateOpen": { value: 12.2, target: 10, met: false, measuredAgain: [{ key: "csrfHalfRateOpen", rate: 6317, p99: 17.2, generatorStallMs: 14.71 }] },
    },
  };
}

describe("the bench summary", () => {
  it("keeps every figure and verdict a reader needs, rounded, without the histograms and raw latencies", () => {
    const text = summaryText(raw());
    const summary = JSON.parse(text);
    expect(summary.date).toBe("2026-11-26T18:21:10.824Z");
    expect(summary.conditions).toMatchObject({ cores: 2, pinned: true, loadAverageBefore: "0.67 0.99 1.07" });
    expect(summary.results.sessionJwt).toEqual({
      name: "GET /auth/session (jwt)",
      server: "jwt app",
      rps: 13656,
      p50: 1.07,
      p99: 2.43,
      errors: 0,
      requests: 68279,
      cpuUs: 72.77,
      rssMb: 133,
      stealMs: 0,
      generatorDelayMs: { p99: 1.28, max: 5.29 },
    });
    expect(summary.results.scenario3HalfRateOpen).toMatchObject({ rps: 5003, rate: 5133 });
    expect(summary.notes.coldStartMs).toEqual({ freshDataFolder: 736, restarts: [648], cpuMs: [650, 630] });
    expect(summary.notes.halfRateMeasuredAgain).toEqual([{ key: "csrfHalfRateOpen", rate: 6317, p99: 17.2, generatorStallMs: 14.71 }]);
    expect(summary.targets["session jwt ≥ 6× Auth.js"]).toEqual({ value: 8.13, target: 6, met: true });
    expect(summary.targets["p99 at half rate, csrfHalfRateOpen"]).toMatchObject({ value: 12.2, met: false, measuredAgain: [{ p99: 17.2 }] });
    expect(text).not.toMatch(/"(hist|latencies|cpuTotalUs)"/);
  });

  it("is small: one line a result and a verdict", () => {
    const text = summaryText(raw());
    expect(JSON.stringify(raw()).length).toBeGreaterThan(1_000_000);
    expect(text.length).toBeLessThan(20_000);
    expect(text.split("\n").length).toBeLessThan(32 + 2 + 30);
    expect(text.split("\n").filter((line) => line.includes('"name"'))).toHaveLength(32);
  });

  describe("written by a run", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "bench-results-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("puts the raw results in raw/ and the summary beside it, both named by the run's date", () => {
      const files = writeResults(dir, raw(10));
      expect(files).toEqual({ raw: path.join(dir, "raw/2026-11-26.json"), summary: path.join(dir, "2026-11-26.json") });
      expect(JSON.parse(readFileSync(files.raw, "utf8"))).toEqual(JSON.parse(JSON.stringify(raw(10))));
      expect(readFileSync(files.summary, "utf8")).toBe(summaryText(raw(10)));
      expect(JSON.parse(readFileSync(files.summary, "utf8")).rawResults).toBe("bench/results/raw/2026-11-26.json");
    });
  });
});
