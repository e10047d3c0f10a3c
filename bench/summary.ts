// What a bench run leaves behind. The raw results (every measurement as the run merged it, the
// notes, the verdicts) go to bench/results/raw/<date>.json, which git ignores; the committed
// bench/results/<date>.json is their summary: each measurement's figures, the notes and the
// verdicts, numbers rounded, one line a measurement and a verdict — a file a reader can open.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Measurement } from "./harness";

export type RawResults = {
  date: string;
  conditions: Record<string, unknown>;
  results: Record<string, Partial<Measurement> & { name: string }>;
  notes: Record<string, unknown>;
  targets: Record<string, { value: number; target: number; met: boolean; [more: string]: unknown }>;
};

/** What a measurement keeps only to merge rounds or to trace one run: left in the raw file. */
const RAW_ONLY = new Set(["hist", "latencies", "spikes", "generatorStalls", "seconds", "cpuTotalUs"]);

/** Integers as they are; otherwise 0 decimals from 100, 2 from 1, 3 below. */
function round(value: unknown): unknown {
  if (typeof value === "number") {
    if (Number.isInteger(value) || !Number.isFinite(value)) return value;
    const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 1 ? 2 : 3;
    return Number(value.toFixed(digits));
  }
  if (Array.isArray(value)) return value.map(round);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, round(v)]));
  return value;
}

export const rawPathOf = (date: string) => `bench/results/raw/${date.slice(0, 10)}.json`;

export function summarize(raw: RawResults) {
  return {
    date: raw.date,
    rawResults: rawPathOf(raw.date),
    conditions: raw.conditions,
    // rps: requests a second; p50, p99: latency in ms; cpuUs: the server's CPU per request in µs;
    // rssMb: the server's resident memory after the measurement; rate: the rate asked for.
    results: Object.fromEntries(Object.entries(raw.results).map(([key, m]) => [key, round(Object.fromEntries(Object.entries(m).filter(([field]) => !RAW_ONLY.has(field))))])),
    notes: round(raw.notes),
    targets: round(raw.targets),
  };
}

/** JSON with the top two levels spread out and anything whose parts are all short on one line. */
function format(value: unknown, depth = 0): string {
  const short = (v: unknown) => v === null || typeof v !== "object" || JSON.stringify(v).length <= 120;
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const entries: [string | null, unknown][] = Array.isArray(value) ? value.map((v) => [null, v]) : Object.entries(value);
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  const part = ([k, v]: [string | null, unknown], d: number) => (k === null ? "" : `${JSON.stringify(k)}: `) + format(v, d);
  if (entries.length === 0) return `${open}${close}`;
  if (depth >= 2 && entries.every(([, v]) => short(v))) return `${open} ${entries.map((e) => part(e, depth + 1)).join(", ")} ${close}`;
  const indent = "  ".repeat(depth + 1);
  return `${open}\n${entries.map((e) => indent + part(e, depth + 1)).join(",\n")}\n${"  ".repeat(depth)}${close}`;
}

export function summaryText(raw: RawResults): string {
  return `${format(summarize(raw))}\n`;
}

/** Writes raw/<date>.json and the summary <date>.json under `dir` (bench/results); returns both paths. */
export function writeResults(dir: string, raw: RawResults): { raw: string; summary: string } {
  const date = raw.date.slice(0, 10);
  const files = { raw: path.join(dir, "raw", `${date}.json`), summary: path.join(dir, `${date}.json`) };
  mkdirSync(path.dirname(files.raw), { recursive: true });
  writeFileSync(files.raw, `${JSON.stringify(raw, null, 2)}\n`);
  writeFileSync(files.summary, summaryText(raw));
  return files;
}
