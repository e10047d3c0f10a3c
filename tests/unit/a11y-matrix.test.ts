// The accessibility subset (tests/support/a11y-matrix.ts): cheap by default, yet every page and
// every mode is checked, and it stays about one check per page when modes multiply (languages).
import { describe, expect, it } from "vitest";
import { a11yPairs, MIN_PAGES_PER_MODE } from "../support/a11y-matrix";

function summary(pageCount: number, modeCount: number) {
  const pairs = a11yPairs(pageCount, modeCount, false);
  const pagesPerMode = Array.from({ length: modeCount }, (_, mode) => pairs.filter((p) => p.mode === mode).length);
  const checkedPages = new Set(pairs.map((p) => p.page));
  const distinct = new Set(pairs.map((p) => `${p.page} ${p.mode}`));
  return { pairs, pagesPerMode, checkedPages, distinct };
}

describe("the accessibility subset", () => {
  it.each([
    [33, 4],
    [33, 16],
    [40, 32],
    [5, 4],
    [2, 8],
    [1, 1],
  ])("%i pages × %i modes: every page checked, every mode on several pages, no pair twice", (pageCount, modeCount) => {
    const { pairs, pagesPerMode, checkedPages, distinct } = summary(pageCount, modeCount);
    expect(checkedPages.size).toBe(pageCount);
    expect(Math.min(...pagesPerMode)).toBeGreaterThanOrEqual(Math.min(MIN_PAGES_PER_MODE, pageCount));
    expect(distinct.size).toBe(pairs.length);
    for (const { page, mode } of pairs) {
      expect(page).toBeLessThan(pageCount);
      expect(mode).toBeLessThan(modeCount);
    }
  });

  it("costs one check per page while there are enough pages, however many modes (4 languages × 4 modes)", () => {
    expect(a11yPairs(33, 4, false)).toHaveLength(33);
    expect(a11yPairs(64, 16, false)).toHaveLength(64);
    // Few pages per mode: only the modes short of pages get more, up to MIN_PAGES_PER_MODE each.
    expect(a11yPairs(33, 16, false).length).toBeLessThanOrEqual(MIN_PAGES_PER_MODE * 16);
  });

  it("VESTIBULE_A11Y_FULL's matrix is every page in every mode", () => {
    expect(a11yPairs(33, 4, true)).toHaveLength(132);
    expect(new Set(a11yPairs(3, 2, true).map((p) => `${p.page} ${p.mode}`))).toEqual(new Set(["0 0", "0 1", "1 0", "1 1", "2 0", "2 1"]));
  });

  it("is the same on every run", () => {
    expect(a11yPairs(33, 4, false)).toEqual(a11yPairs(33, 4, false));
    // 5 pages, 4 modes: one round (pages 0–4) and the modes short of pages dealt pages again.
    expect(a11yPairs(5, 4, false).map((p) => `${p.page}:${p.mode}`)).toEqual(["0:0", "0:2", "1:0", "1:1", "1:3", "2:1", "2:2", "2:3", "3:1", "3:3", "4:0", "4:2"]);
  });
});
