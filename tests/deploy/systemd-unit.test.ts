// deploy/systemd/vestibule@.service as systemd reads it (no systemd runs here to start it):
// `systemd-analyze verify` finds no unknown key or bad value, and `systemd-analyze security`
// rates its sandboxing "OK" (exposure at most 2.0 of 10). Skipped where systemd-analyze is missing.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEPLOY_DIR } from "../support/deploy";

const analyze = spawnSync("sh", ["-c", "command -v systemd-analyze"], { encoding: "utf8" }).stdout.trim();
if (!analyze) console.log("systemd-analyze not found: systemd unit checks skipped");

describe.skipIf(!analyze)("the vestibule@ systemd unit", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "vestibule-unit-"));
  copyFileSync(path.join(DEPLOY_DIR, "systemd/vestibule@.service"), path.join(dir, "vestibule@.service"));
  symlinkSync("vestibule@.service", path.join(dir, "vestibule@3001.service"));
  const unit = path.join(dir, "vestibule@3001.service");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes systemd-analyze verify without a warning", () => {
    const result = spawnSync(analyze, ["verify", "--man=no", unit], { encoding: "utf8" });
    expect(result.status).toBe(0);
    expect(`${result.stdout}${result.stderr}`.trim()).toBe("");
  });

  it("is sandboxed: systemd-analyze security rates its exposure at most 2.0", () => {
    const result = spawnSync(analyze, ["security", "--offline=true", "--no-pager", unit], { encoding: "utf8" });
    const exposure = /Overall exposure level for \S+: ([\d.]+)/.exec(result.stdout);
    expect(exposure, result.stdout + result.stderr).not.toBeNull();
    expect(Number(exposure![1])).toBeLessThanOrEqual(2.0);
  });
});
