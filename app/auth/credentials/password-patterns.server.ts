// Passwords that are one simple pattern, refused when a password is chosen (issue 32): the
// patterns zxcvbn's matchers find first and guess in a handful of tries, whatever their length.
// - a repeat: the whole password is one short unit said again and again ("aaaaaaaaaaaaaaaaaaaa",
//   "abab…", "123123123123"), or any unit that is itself refused ("qwertyqwerty", "passwordpassword");
// - a sequence: every step between neighbouring characters is the same small one ("abcdefghij",
//   "0123456789", "1234567890123456", "zyxwvu", "acegik");
// - a keyboard run: every character is next to the one before on one keyboard layout that
//   @zxcvbn-ts/language-common describes (qwerty, qwertz, azerty, dvorak, the keypads), with at
//   most a few turns ("qwertyuiop", "asdfghjkl;", "zaq12wsxcde").
// Long random passphrases are none of these and pass. Case does not matter.
import { createRequire } from "node:module";

/** The longest unit a repeat may have and still be refused for the repeat alone. */
const SHORT_UNIT = 4;
/** Steps (in code points) a sequence may take between neighbours, as zxcvbn's sequence matcher. */
const MAX_SEQUENCE_STEP = 5;
/** Changes of direction a keyboard run may make and still be one simple run. */
const MAX_KEYBOARD_TURNS = 5;
/** Shortest whole password the sequence and keyboard rules look at (shorter ones are too short anyway). */
const MIN_RUN = 3;

type Graph = Record<string, (string | null)[]>;
let graphs: Graph[] | null = null;

/** The keyboard layouts, loaded on first use with the common-password list (docs/decisions/094). */
function keyboards(): Graph[] {
  if (graphs) return graphs;
  const { adjacencyGraphs } = createRequire(import.meta.url)("@zxcvbn-ts/language-common") as {
    adjacencyGraphs: Record<string, Graph>;
  };
  graphs = Object.values(adjacencyGraphs);
  return graphs;
}

/** The step from `a` to `b`; between digits it goes round (9 → 0 is +1), as people count on. */
function stepOf(a: string, b: string): number {
  const delta = b.codePointAt(0)! - a.codePointAt(0)!;
  if (!/^[0-9]$/.test(a) || !/^[0-9]$/.test(b)) return delta;
  const round = (delta + 10) % 10;
  return round > 5 ? round - 10 : round;
}

function isSequence(chars: readonly string[]): boolean {
  if (chars.length < MIN_RUN) return false;
  const step = stepOf(chars[0]!, chars[1]!);
  if (step === 0 || Math.abs(step) > MAX_SEQUENCE_STEP) return false;
  for (let i = 2; i < chars.length; i++) if (stepOf(chars[i - 1]!, chars[i]!) !== step) return false;
  return true;
}

/** The direction from `from` to `to` on `graph` (the index among its neighbours), or -1. */
function direction(graph: Graph, from: string, to: string): number {
  const neighbours = graph[from];
  if (!neighbours) return -1;
  return neighbours.findIndex((keys) => keys !== null && keys.includes(to));
}

function isKeyboardRun(chars: readonly string[]): boolean {
  if (chars.length < MIN_RUN) return false;
  return keyboards().some((graph) => {
    let turns = 0;
    let previous = -1;
    for (let i = 1; i < chars.length; i++) {
      // The graphs list each key with its shifted character ("qQ", "1!"): either is on the key.
      const d = direction(graph, chars[i - 1]!, chars[i]!);
      if (d === -1) return false;
      if (previous !== -1 && d !== previous) turns++;
      previous = d;
    }
    return turns <= MAX_KEYBOARD_TURNS;
  });
}

/** Whether the whole of `chars` is one unit repeated; the shortest such unit, or null. */
function repeatedUnit(chars: readonly string[]): string[] | null {
  for (let size = 1; size <= chars.length / 2; size++) {
    if (chars.length % size !== 0) continue;
    if (chars.every((c, i) => c === chars[i % size])) return chars.slice(0, size);
  }
  return null;
}

/**
 * Whether `normalized` (the NFKC password) is one simple pattern. `listed` says whether a unit is
 * on the common-password list, so that "passwordpassword" is a repeat of a refused word.
 */
export function isSimplePattern(normalized: string, listed: (lower: string) => boolean): boolean {
  const chars = [...normalized.toLowerCase()];
  if (isSequence(chars) || isKeyboardRun(chars)) return true;
  const unit = repeatedUnit(chars);
  if (!unit) return false;
  return unit.length <= SHORT_UNIT || listed(unit.join("")) || isSequence(unit) || isKeyboardRun(unit);
}

/**
 * What people put around a word to meet a rule or to make it "different" (zxcvbn's dictionary
 * matcher with its l33t and affix variants): digits, years and symbols before or after it.
 */
const AFFIX = /^([\p{N}\p{P}\p{S}\s]*)(.*?)([\p{N}\p{P}\p{S}\s]*)$/su;
/** An affix this long or shorter is a decoration whatever it is ("2024", "!!", "007", "1"). */
const SHORT_AFFIX = 4;
/** The shortest word the affix rule judges: shorter ones are common parts of any passphrase. */
const MIN_WORD = 4;
/** The l33t people use most, both readings of "1" and "!" (an "i" or an "l"). */
const LEET_I: Readonly<Record<string, string>> = { "4": "a", "@": "a", "3": "e", "1": "i", "!": "i", "0": "o", $: "s", "5": "s", "7": "t", "+": "t" };
const LEET_L: Readonly<Record<string, string>> = { ...LEET_I, "1": "l", "!": "l" };

const unleet = (word: string, table: Readonly<Record<string, string>>) => [...word].map((c) => table[c] ?? c).join("");

/**
 * An affix that adds next to nothing: its digits and its other characters each short ("2024!"),
 * or one simple pattern ("1234567", "!!!!!!").
 */
function isDecoration(affix: string, listed: (lower: string) => boolean): boolean {
  const part = (chars: string) => [...chars].length <= SHORT_AFFIX || isSimplePattern(chars, listed);
  const trimmed = affix.replace(/\s/gu, "");
  return part(trimmed.replace(/\P{N}/gu, "")) && part(trimmed.replace(/\p{N}/gu, ""));
}

/**
 * Whether `normalized` is a listed word, or one simple pattern, dressed up (issue: "password1234567"
 * was accepted): decorations stripped from either end, l33t read back ("p@ssw0rd"), what is left
 * is on the common-password list (`commonWord`) or a simple pattern (`simplePattern`). A long
 * random number beside a word is no decoration, and words of a passphrase are never stripped.
 */
export function decoratedWeakness(normalized: string, listed: (lower: string) => boolean): "commonWord" | "simplePattern" | null {
  const lower = normalized.toLowerCase();
  const candidates = new Set<string>();
  // The affixes first (a trailing "1" or "!" is a decoration), then l33t in what is left; and l33t
  // first for a word that starts or ends with one ("@dmin", "hell0").
  for (const text of [lower, unleet(lower, { "@": "a", $: "s" })]) {
    const [, before = "", core = "", after = ""] = AFFIX.exec(text) ?? [];
    if ((before && !isDecoration(before, listed)) || (after && !isDecoration(after, listed))) continue;
    candidates.add(core);
    candidates.add(unleet(core, LEET_I));
    candidates.add(unleet(core, LEET_L));
  }
  candidates.delete(lower);
  const words = [...candidates].filter((word) => [...word].length >= MIN_WORD);
  if (words.some(listed)) return "commonWord";
  if (words.some((word) => isSimplePattern(word, listed))) return "simplePattern";
  return null;
}
