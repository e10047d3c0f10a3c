// fixed work, timed, every 200 ms; with steal delta of cpu0
import fs from "node:fs";
function steal(){ const l=fs.readFileSync("/proc/stat","utf8").split("\n").find(x=>x.startsWith("cpu0 ")).split(/\s+/); return +l[8]; }
const out=[];
for (let i=0;i<Number(process.argv[2]??150);i++){
  const s0=steal(); const t0=process.hrtime.bigint();
  let x=0; for(let j=0;j<20_000_000;j++){ x=(x*31+j)|0; }
  const t1=process.hrtime.bigint(); const s1=steal();
  out.push([Number(t1-t0)/1e6, s1-s0, x&1]);
  await new Promise(r=>setTimeout(r,100));
}
const ms=out.map(o=>o[0]); ms.sort((a,b)=>a-b);
console.log("min",ms[0].toFixed(1),"p50",ms[ms.length>>1].toFixed(1),"max",ms.at(-1).toFixed(1));
console.log(out.map(o=>o[0].toFixed(0)+(o[1]?"s"+o[1]:"")).join(" "));
