// The flags the production server restarts itself with (server/runtime-flags.ts, ADR 068, 094):
// what is missing is added, what the operator gave wins, and the async context flag only goes to a
// Node that knows it and does not already do it.
import { describe, expect, it } from "vitest";
import { ASYNC_CONTEXT_FRAME_FLAG, asyncContextFrameFlags, missingFlags, SINGLE_THREADED_GC_FLAG, singleCpuGcFlags, V8_LIMITS } from "../../../server/runtime-flags";

const KNOWN = new Set([ASYNC_CONTEXT_FRAME_FLAG]);
const LIMITS = Object.entries(V8_LIMITS).map(([name, value]) => `${name}=${value}`);

describe("asyncContextFrameFlags", () => {
  it("gives the flag to Node 22 and 23, which know it and do not use context frames by default", () => {
    expect(asyncContextFrameFlags("22.22.0", KNOWN)).toEqual([ASYNC_CONTEXT_FRAME_FLAG]);
    expect(asyncContextFrameFlags("23.11.1", KNOWN)).toEqual([ASYNC_CONTEXT_FRAME_FLAG]);
  });

  it("gives nothing to Node 24 and later (their default) or to a Node that does not know the flag (it would refuse to start)", () => {
    expect(asyncContextFrameFlags("24.0.0", KNOWN)).toEqual([]);
    expect(asyncContextFrameFlags("26.1.0", KNOWN)).toEqual([]);
    expect(asyncContextFrameFlags("22.22.0", new Set())).toEqual([]);
  });

  it("is known to the Node running these tests when it is older than 24", () => {
    const major = Number(process.versions.node.split(".", 1)[0]);
    expect(asyncContextFrameFlags()).toEqual(major < 24 ? [ASYNC_CONTEXT_FRAME_FLAG] : []);
  });
});

describe("singleCpuGcFlags", () => {
  it("keeps every collection on the main thread of a process that may use one CPU, and gives nothing where there are more", () => {
    expect(singleCpuGcFlags(1)).toEqual([SINGLE_THREADED_GC_FLAG]);
    expect(singleCpuGcFlags(2)).toEqual([]);
    expect(singleCpuGcFlags(64)).toEqual([]);
  });
});

describe("missingFlags", () => {
  const context = [ASYNC_CONTEXT_FRAME_FLAG];

  it("on one CPU the collection flag is added too, unless the operator said otherwise (--no-single-threaded-gc)", () => {
    const gc = [SINGLE_THREADED_GC_FLAG];
    expect(missingFlags([], "", context, gc)).toEqual([...LIMITS, ASYNC_CONTEXT_FRAME_FLAG, SINGLE_THREADED_GC_FLAG]);
    expect(missingFlags([...LIMITS, ASYNC_CONTEXT_FRAME_FLAG, SINGLE_THREADED_GC_FLAG], "", context, gc)).toEqual([]);
    expect(missingFlags([], "--no-single-threaded-gc", context, gc)).toEqual([...LIMITS, ASYNC_CONTEXT_FRAME_FLAG]);
    expect(missingFlags(["--single_threaded_gc"], "", context, gc)).toEqual([...LIMITS, ASYNC_CONTEXT_FRAME_FLAG]);
  });

  it("started with nothing: every limit and the context flag", () => {
    expect(missingFlags([], "", context, [])).toEqual([...LIMITS, ASYNC_CONTEXT_FRAME_FLAG]);
  });

  it("started with everything (the restarted process): nothing, so it does not restart again", () => {
    expect(missingFlags([...LIMITS, ASYNC_CONTEXT_FRAME_FLAG], "", context, [])).toEqual([]);
  });

  it("a limit the operator set, on the command line or in NODE_OPTIONS, with - or _, wins", () => {
    expect(missingFlags(["--max-old-space-size=200"], "", context)).not.toContainEqual(expect.stringMatching(/^--max-old-space-size/));
    expect(missingFlags([], "--max_semi_space_size=8", context)).not.toContainEqual(expect.stringMatching(/^--max-semi-space-size/));
  });

  it("an operator's --no-async-context-frame (or --no-experimental-…) is kept: the flag is not added", () => {
    expect(missingFlags([], "--no-async-context-frame", context, [])).toEqual(LIMITS);
    expect(missingFlags(["--no-experimental-async-context-frame"], "", context, [])).toEqual(LIMITS);
    expect(missingFlags(["--async-context-frame"], "", context, [])).toEqual(LIMITS);
  });
});
