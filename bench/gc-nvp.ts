// What `node --trace-gc-nvp` says about a stretch of a server's output: the young collections
// (gc=s), the bytes they moved to the old generation (promoted=), the old-generation collections
// (gc=ms, mc, mmc), and how much the heap grew from one young collection to the next when no
// old-generation collection ran between them (total_size_after=): what stayed behind, promoted or
// allocated in the old generation directly (ADR 100: Node's GC observer's entries go there).
// Read by the bench's promotion part and the production-server test (docs/decisions/096).
export type Promotion = { promotedBytes: number; youngCollections: number; oldCollections: number; heapGrowthBytes: number };

export function promotionIn(trace: string): Promotion {
  const lines = trace.split("\n").filter((line) => /\bgc=\w+/.test(line));
  const young = lines.filter((line) => /\bgc=s\b/.test(line));
  const field = (line: string, name: string) => Number(new RegExp(`\\b${name}=(\\d+)`).exec(line)?.[1] ?? 0);
  let heapGrowthBytes = 0;
  for (let i = 1; i < lines.length; i++) {
    // Only between two young collections in a row: an old-generation collection frees what grew.
    if (/\bgc=s\b/.test(lines[i - 1]!) && /\bgc=s\b/.test(lines[i]!)) heapGrowthBytes += field(lines[i]!, "total_size_after") - field(lines[i - 1]!, "total_size_after");
  }
  return {
    promotedBytes: young.reduce((sum, line) => sum + field(line, "promoted"), 0),
    youngCollections: young.length,
    oldCollections: lines.filter((line) => /\bgc=(?:ms|mc|mmc)\b/.test(line)).length,
    heapGrowthBytes,
  };
}
