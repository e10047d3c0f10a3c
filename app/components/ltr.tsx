import { Fragment, type ReactNode } from "react";

// Machine text a visitor reads inside a sentence — an e-mail address, a host, a path, a code —
// is left to right in any page: <bdi dir="ltr"> isolates it, so an Arabic sentence's full stop
// stays after "pen@example.com", not before it (ADR 161). A short one is never broken (it moves
// whole to the next line); a long one breaks only where a reader expects:
// after "@", before a "." or a "/" — never inside a word, unless one part alone is wider than
// the line (app.css .ltr: overflow-wrap: break-word, the last resort).

/** Where a line may break in machine text: after "@", before "." and "/" (a hyphen already is one). */
const BREAK = /(?<=@)|(?=[./](?!$))/;

/**
 * Up to this many characters a fragment gets no break points: without them it is one word, which
 * moves whole to the next line when it does not fit where it starts ("u5@example.com",
 * "127.0.0.1:4399"), rather than leave "u5@" at a line's end. Every line of the narrowest screen
 * (320 px) holds this many; a longer one breaks at its sensible points.
 */
const WHOLE_UP_TO = 24;

/** `value` with <wbr> at its sensible break points, when it is long enough to need them. */
function withBreaks(value: string): ReactNode {
  if (value.length <= WHOLE_UP_TO) return value;
  const parts = value.split(BREAK);
  return parts.length < 2 ? value : parts.map((part, i) => (
    <Fragment key={i}>
      {i ? <wbr /> : null}
      {part}
    </Fragment>
  ));
}

/** An address, host, path or code inside a sentence: isolated left to right, breaking at sensible points. */
export function Ltr({ children, id, className }: { children: string; id?: string; className?: string }) {
  return (
    <bdi dir="ltr" className={className ? `ltr ${className}` : "ltr"} id={id}>
      {withBreaks(children)}
    </bdi>
  );
}
