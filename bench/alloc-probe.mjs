// Preloaded (`node --import ./bench/alloc-probe.mjs`) by the allocation part of `npm run bench`:
// on SIGUSR2 the server writes one line to stdout with the V8 heap in use. The bench starts the
// server with a young generation large enough that N requests cause no collection (and with
// --trace-gc, whose lines in between show that none ran), so the growth of the heap between two
// such lines, divided by N, is what one request allocates on the JavaScript heap. Nothing of this
// runs in production.
import v8 from "node:v8";

process.on("SIGUSR2", () => {
  const heap = v8.getHeapStatistics();
  const memory = process.memoryUsage();
  process.stdout.write(
    `alloc-probe ${JSON.stringify({ usedHeap: heap.used_heap_size, external: memory.external, rss: memory.rss, heapTotal: memory.heapTotal, arrayBuffers: memory.arrayBuffers, code: heap.total_heap_size_executable, malloced: heap.malloced_memory, spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_size / 1048576)])) })}\n`,
  );
});
