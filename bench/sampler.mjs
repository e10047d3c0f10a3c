// Preloaded (`node --import ./bench/sampler.mjs`) by bench/profile-endpoint.ts: the first SIGUSR2
// starts a profiler, the second writes its profile to SAMPLER_OUT and prints "sampler written".
// SAMPLER_KIND=heap: V8's sampling heap profiler, counting what the young and old collections took
// away too (so a request's short-lived garbage shows, not only what is still alive); cpu: the CPU
// profiler at 100 µs. Only the requests between the two signals are in the profile, not the
// start. Nothing of this runs in production.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

const session = new Session();
session.connect();
const cpu = process.env.SAMPLER_KIND === "cpu";
let sampling = false;
process.on("SIGUSR2", async () => {
  if (!sampling) {
    sampling = true;
    if (cpu) {
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 100 });
      await session.post("Profiler.start");
    } else {
      await session.post("HeapProfiler.startSampling", { samplingInterval: 128, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    }
    process.stdout.write("sampler started\n");
    return;
  }
  sampling = false;
  const { profile } = cpu ? await session.post("Profiler.stop") : await session.post("HeapProfiler.stopSampling");
  writeFileSync(process.env.SAMPLER_OUT, JSON.stringify(profile));
  process.stdout.write("sampler written\n");
});
