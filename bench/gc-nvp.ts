// What `node --trace-gc-nvp` says about a stretch of a server's output: the young collections
// (gc=s), the bytes they moved to the old generation (promoted=), and the old-generation
// collections (gc=ms, mc, mmc). Read by the bench's promotion part and the production-server test
// (docs/decisions/096).
export type Promotion = { promotedBytes: number; youngCollections: number; oldCollections: number };

export function promotionIn(trace: string): Promotion {
  const lines = trace.split("\n");
  const young = lines.filter((line) => /\bgc=s\b/.test(line));
  return {
    promotedBytes: young.reduce((sum, line) => sum + Number(/\bpromoted=(\d+)/.exec(line)?.[1] ?? 0), 0),
    youngCollections: young.length,
    oldCollections: lines.filter((line) => /\bgc=(?:ms|mc|mmc)\b/.test(line)).length,
  };
}
