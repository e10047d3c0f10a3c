// bench/gc-nvp.ts reads `node --trace-gc-nvp` lines for the bench and the production-server test.
import { describe, expect, it } from "vitest";
import { promotionIn } from "../../../bench/gc-nvp";

const young = (after: number, promoted: number) => `[1:0x1]  10 ms: pause=0.3 mutator=10.0 gc=s reduce_memory=0 total_size_before=${after + 1_000_000} total_size_after=${after} promoted=${promoted}`;
const old = (after: number) => `[1:0x1]  20 ms: pause=6.0 mutator=30.0 gc=mc reduce_memory=0 total_size_before=${after + 9_000_000} total_size_after=${after} promoted=0`;

describe("a --trace-gc-nvp stretch", () => {
  it("sums what young collections promoted and counts both kinds", () => {
    const trace = [young(30_000_000, 100), "a log line", young(30_000_500, 200), old(28_000_000), young(28_000_100, 50)].join("\n");
    expect(promotionIn(trace)).toMatchObject({ promotedBytes: 350, youngCollections: 3, oldCollections: 1 });
  });

  it("counts the heap's growth only between young collections in a row, not across an old one", () => {
    const trace = [young(30_000_000, 0), young(30_004_000, 0), young(30_010_000, 0), old(28_000_000), young(28_001_000, 0), young(28_003_000, 0)].join("\n");
    expect(promotionIn(trace).heapGrowthBytes).toBe(4_000 + 6_000 + 2_000);
  });
});
