// Which page is checked for accessibility in which mode (tests/browser/a11y.test.ts).
//
// A mode is one way a visitor sees a page: JavaScript off or on × the light or the dark colour
// scheme (and, once pages are translated, × each language). The full matrix is every page in
// every mode: pages × modes axe runs, which grows with each new dimension. The default subset
// keeps the cost at about one axe run per page however many modes there are:
//   - every page is checked once, in one mode;
//   - the modes are dealt out in turn (page i gets mode i mod M), so every mode is checked on
//     several pages; when there are fewer than MIN_PAGES_PER_MODE pages per mode (many modes),
//     pages are dealt again to the modes short of them, each page at most once per mode.
// What only a mode can break (a dark-scheme contrast, a hydration-only element, a translated
// label) is still caught on the pages that mode gets; VESTIBULE_A11Y_FULL=1 runs every pair
// (before a release, or after a change to the styles or the layout).
// docs/decisions/065-test-suite-speed.md

/** VESTIBULE_A11Y_FULL=1: every page in every mode. */
export const A11Y_FULL = process.env.VESTIBULE_A11Y_FULL === "1";

/** In the subset, each mode is checked on at least this many pages. */
export const MIN_PAGES_PER_MODE = 3;

/**
 * The (page, mode) pairs to check, as indices into `pageCount` pages and `modeCount` modes, in
 * page order. Deterministic: the same pages and modes give the same pairs on every run.
 */
export function a11yPairs(pageCount: number, modeCount: number, full = A11Y_FULL): Array<{ page: number; mode: number }> {
  const pairs = new Map<string, { page: number; mode: number }>();
  const add = (page: number, mode: number) => pairs.set(`${page} ${mode}`, { page, mode });
  if (full) {
    for (let page = 0; page < pageCount; page++) for (let mode = 0; mode < modeCount; mode++) add(page, mode);
  } else if (pageCount > 0 && modeCount > 0) {
    const pagesOf = new Array<number>(modeCount).fill(0);
    for (let page = 0; page < pageCount; page++) {
      add(page, page % modeCount);
      pagesOf[page % modeCount]! += 1;
    }
    // Few pages per mode (many modes): the pages are dealt again, in turn, to the modes short of pages.
    let next = 0;
    for (let mode = 0; mode < modeCount; mode++) {
      while (pagesOf[mode]! < Math.min(MIN_PAGES_PER_MODE, pageCount)) {
        const page = next++ % pageCount;
        if (pairs.has(`${page} ${mode}`)) continue;
        add(page, mode);
        pagesOf[mode]! += 1;
      }
    }
  }
  return [...pairs.values()].sort((a, b) => a.page - b.page || a.mode - b.mode);
}
