// What a person types into a code field (an e-mailed code, an authenticator code, a recovery
// code) in whatever digits their keyboard gives: an Arabic keyboard types ٣٦٠٩٠٣, a Persian one
// ۳۶۰۹۰۳, a phone in full-width mode ３６０９０３. Every Unicode decimal digit (\p{Nd}) is read as
// the ASCII digit of the same value before a code is checked, here and only here.
//
// Unicode keeps each run of decimal digits contiguous and in order 0–9 (its stability policy), and
// runs that touch (the mathematical digits) are whole sets of ten, so a digit's value is its
// distance from the start of its run, modulo ten.

const DECIMAL_DIGIT = /\p{Nd}/u;
const NON_ASCII_DIGITS = /(?![0-9])\p{Nd}/gu;

function digitValue(codePoint: number): number {
  let start = codePoint;
  while (start > 0 && DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start--;
  return (codePoint - start) % 10;
}

/** `typed` with every decimal digit of any script turned into its ASCII digit; all else kept. */
export function asciiDigits(typed: string): string {
  return typed.replace(NON_ASCII_DIGITS, (digit) => String(digitValue(digit.codePointAt(0)!)));
}
