// deploy/systemd/vestibule@.service as systemd reads it (no systemd runs here to start it):
// `systemd-analyze verify` finds no unknown key or bad value, and `systemd-analyze security`
// rates its sandboxing "OK" (exposure at most 2.0 of 10), with /opt/vestibule (where the code is
// installed) replaced by this checkout so that verify finds the scripts it runs. Skipped where
// systemd-analyze is missing. tests/deploy/stop-signal.test.ts runs its command lines.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEPLOY_DIR } from "../support/deploy";

const analyze = spawnSync("sh", ["-c", "command -v systemd-analyze"], { encoding: "utf8" }).stdout.trim();
if (!analyze) console.log("systemd-analyze not found: systemd unit checks skipped");

describe.skipIf(!analyze)("the vestibule@ systemd unit", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "vestibule-unit-"));
  const shipped = readFileSync(path.join(DEPLOY_DIR, "systemd/vestibule@.service"), "utf8");
  writeFileSync(path.join(dir, "vestibule@.service"), shipped.replaceAll("/opt/vestibule/", `${path.dirname(DEPLOY_DIR)}/`));
  symlinkSync("vestibule@.service", path.join(dir, "vestibule@3001.service"));
  const unit = path.join(dir, "vestibule@3001.service");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes systemd-analyze verify without a warning", () => {
    const result = spawnSync(analyze, ["verify", "--man=no", unit], { encoding: "utf8" });
    expect(result.status).toBe(0);
    expect(`${result.stdout}${result.stderr}`.trim()).toBe("");
  });

  it("runs node itself as the main process, never npm or a shell, so that SIGTERM reaches it (KillMode=mixed)", () => {
    const execStart = /^ExecStart=(.*)$/m.exec(shipped)?.[1]?.trim().split(/\s+/) ?? [];
    const program = execStart[0] === "/usr/bin/env" ? execStart[1] : execStart[0];
    expect(program && path.basename(program)).toBe("node");
    expect(shipped).toMatch(/^KillMode=mixed$/m);
  });

  it("never stops restarting for good: no start limit", () => {
    expect(shipped).toMatch(/^StartLimitIntervalSec=0$/m);
  });

  it("is sandboxed: systemd-analyze security rates its exposure at most 2.0", () => {
    const result = spawnSync(analyze, ["security", "--offline=true", "--no-pager", unit], { encoding: "utf8" });
    const exposure = /Overall exposure level for \S+: ([\d.]+)/.exec(result.stdout);
    expect(exposure, result.stdout + result.stderr).not.toBeNull();
    expect(Number(exposure![1])).toBeLessThanOrEqual(2.0);
  });
});
