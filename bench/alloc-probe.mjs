// Preloaded (`node --import ./bench/alloc-probe.mjs`) by the allocation part of `npm run bench`:
// on SIGUSR2 the server writes one line to stdout with the V8 heap in use. The bench starts the
// server with a young generation large enough that N requests cause no collection (and with
// --trace-gc, whose lines in between show that none ran), so the growth of the heap between two
// such lines, divided by N, is what one request allocates on the JavaScript heap. Nothing of this
// runs in production.
import v8 from "node:v8";

process.on("SIGUSR2", () => {
  const heap = v8.getHeapStatistics();
  process.stdout.write(`alloc-probe ${JSON.stringify({ usedHeap: heap.used_heap_size, external: process.memoryUsage().external })}\n`);
});
