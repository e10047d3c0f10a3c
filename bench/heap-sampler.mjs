// Preloaded (`node --import ./bench/heap-sampler.mjs`) by bench/profile-endpoint.ts: the first
// SIGUSR2 starts V8's sampling heap profiler counting what the young and old collections take
// away too (so a request's short-lived garbage shows, not only what is still alive), the second
// writes the profile to HEAP_SAMPLER_OUT and prints "heap-sampler written". Nothing of this runs in production.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

const session = new Session();
session.connect();
let sampling = false;
process.on("SIGUSR2", async () => {
  if (!sampling) {
    sampling = true;
    await session.post("HeapProfiler.startSampling", { samplingInterval: 128, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    process.stdout.write("heap-sampler started\n");
    return;
  }
  sampling = false;
  const { profile } = await session.post("HeapProfiler.stopSampling");
  writeFileSync(process.env.HEAP_SAMPLER_OUT, JSON.stringify(profile));
  process.stdout.write("heap-sampler written\n");
});
