// fixed work timed every 250 ms, prints epoch-ms and ms per unit, until killed
let x=0;
for (;;) {
  const t0=performance.now();
  for(let j=0;j<5_000_000;j++){ x=(x*31+j)|0; }
  const t1=performance.now();
  process.stdout.write(`${Math.round(performance.timeOrigin+t0)} ${(t1-t0).toFixed(2)}\n`);
  await new Promise(r=>setTimeout(r,250));
}
