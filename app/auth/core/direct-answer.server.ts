// The Response a JSON answer is when the production server's fast path writes it itself
// (server/fast-path.ts; docs/decisions/089, 099): its text beside it instead of a body stream, and
// its headers in a plain map instead of Fetch Headers. Everything between the route and the
// writer — the root middleware's security headers and Vary, the outage check, the metrics — reads
// and sets them through the Headers API, and undici's Headers validate, normalise and re-sort on
// every call: about 6–10 µs of a 60–80 µs request. It is still a Response (instanceof, status,
// statusText, a null body) for whatever tests one. Outside the fast path nothing builds one.

/** RFC 9110 token: what undici's Headers accept as a name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What a value may not hold once trimmed: undici's isValidHeaderValue, and WebIDL's ByteString (nothing above U+00FF). */
const FORBIDDEN_IN_VALUE = /[\0\r\n\u0100-\uffff]/;
/** HTTP whitespace, trimmed from both ends of a value (Fetch: normalize). */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const isHttpWhitespace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;

// Names checked once: the code sets a handful of constant names, so each is tested and lowered
// the first time only. Bounded all the same.
const checkedNames = new Map<string, string>();
const CHECKED_NAMES_KEPT = 256;

function headerName(name: string): string {
  const known = checkedNames.get(name);
  if (known !== undefined) return known;
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Invalid header name: "${text}"`);
  const key = text.toLowerCase();
  if (checkedNames.size < CHECKED_NAMES_KEPT) checkedNames.set(text, key);
  return key;
}

function headerValue(name: string, value: string): string {
  let text = String(value);
  if (text.length > 0 && (isHttpWhitespace(text.charCodeAt(0)) || isHttpWhitespace(text.charCodeAt(text.length - 1)))) text = text.replace(EDGE_WHITESPACE, "");
  if (FORBIDDEN_IN_VALUE.test(text)) throw new TypeError(`Invalid value for header "${name}"`);
  return text;
}

/**
 * Fetch Headers' behaviour for one answer's headers, as undici has it: names compared and listed in
 * lower case, values trimmed and checked, a repeated name's values joined by ", " (Cookie's by
 * "; ") except Set-Cookie, whose values stay apart (getSetCookie, one entry each when iterated), and iteration
 * in name order. tests/unit/core/direct-answer.test.ts holds it to undici's for any sequence of calls.
 */
export class PlainHeaders implements Headers {
  readonly #values = new Map<string, string>();
  #cookies: string[] = [];

  append(name: string, value: string): void {
    const key = headerName(name);
    const text = headerValue(name, value);
    if (key === "set-cookie") this.#cookies.push(text);
    const held = this.#values.get(key);
    // Fetch joins a repeated name's values with ", ", and Cookie's with "; " (undici's HeadersList).
    this.#values.set(key, held === undefined ? text : `${held}${key === "cookie" ? "; " : ", "}${text}`);
  }

  set(name: string, value: string): void {
    const key = headerName(name);
    const text = headerValue(name, value);
    if (key === "set-cookie") this.#cookies = [text];
    this.#values.set(key, text);
  }

  delete(name: string): void {
    const key = headerName(name);
    if (key === "set-cookie") this.#cookies = [];
    this.#values.delete(key);
  }

  get(name: string): string | null {
    return this.#values.get(headerName(name)) ?? null;
  }

  has(name: string): boolean {
    return this.#values.has(headerName(name));
  }

  getSetCookie(): string[] {
    return [...this.#cookies];
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [key, value] of this.#entries()) callback.call(thisArg, value, key, this);
  }

  /** The entries in name order, Set-Cookie's one by one: what iteration walks. */
  #entries(): [string, string][] {
    const keys = [...this.#values.keys()].sort();
    const list: [string, string][] = [];
    for (const key of keys) {
      if (key === "set-cookie") for (const cookie of this.#cookies) list.push([key, cookie]);
      else list.push([key, this.#values.get(key)!]);
    }
    return list;
  }

  entries(): HeadersIterator<[string, string]> {
    return this.#entries()[Symbol.iterator]() as HeadersIterator<[string, string]>;
  }

  keys(): HeadersIterator<string> {
    return this.#entries().map(([key]) => key)[Symbol.iterator]() as HeadersIterator<string>;
  }

  values(): HeadersIterator<string> {
    return this.#entries().map(([, value]) => value)[Symbol.iterator]() as HeadersIterator<string>;
  }

  [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.entries();
  }
}

/** A bodiless Response with its text beside it and plain headers; the fast path writes both. */
export class DirectAnswer extends Response {
  /** The JSON text the fast path writes as the body (not `text`: that is Response's reader). */
  readonly bodyText: string;
  readonly #headers = new PlainHeaders();

  constructor(bodyText: string, status: number) {
    super(null, { status });
    this.bodyText = bodyText;
  }

  override get headers(): Headers {
    return this.#headers;
  }

  /** Another answer with the same text, status and headers (withHeaders' copy for immutable headers). */
  copy(): DirectAnswer {
    const copy = new DirectAnswer(this.bodyText, this.status);
    for (const [name, value] of this.#headers) copy.#headers.append(name, value);
    return copy;
  }
}
