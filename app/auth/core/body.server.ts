// The one reader of request bodies (docs/decisions/024-body-reader.md). Every POST route, page
// action and route middleware reads its body here, and a request's body is read once:
// - the media type is checked before a byte is read: form-encoded or JSON, else 415;
// - a declared Content-Length over the limit is refused before a byte is read (413);
// - the bytes are counted as they arrive and the read stops at the limit (413), so a chunked body
//   with no Content-Length never costs more than the limit, whatever its size;
// - the parsed body is kept per Request, so the JSON-redirect middleware and the action that
//   runs after it share one read instead of cloning the stream (a clone buffers all of it).
import { badRequest } from "./respond.server";
import { slot } from "./slot";

/** Bodies over 64 KiB get 413. */
export const DEFAULT_BODY_LIMIT = 64 * 1024;
/** A client log event is at most 4 KiB. */
export const CLIENT_LOG_BODY_LIMIT = 4 * 1024;
/** A CSP violation report (one, or a few in a Reporting API batch) is well under 8 KiB (ADR 073). */
export const CSP_REPORT_BODY_LIMIT = 8 * 1024;

export const FORM_TYPE = "application/x-www-form-urlencoded";
export const JSON_TYPE = "application/json";

export class BadRequestError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 413 | 415 = 400,
  ) {
    super(message);
    this.name = "BadRequestError";
  }
}

export type Body = Record<string, unknown>;

const tooLarge = () => new BadRequestError("Request body too large.", 413);

/** The request's media type, lower-case, without parameters ("" when absent). */
export function mediaType(request: Request): string {
  return (request.headers.get("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase();
}

type Read = { body: Body; bytes: number };
const reads = slot<Request, Promise<Read>>("bodyRead");

/**
 * The request's body as a plain object, read at most once per Request: a later call gets the
 * first call's result (or its refusal). Throws only BadRequestError: 415 for another media type,
 * 413 past `limit`, 400 for JSON that is malformed or not an object and for a broken stream.
 */
export function readBody(request: Request, limit = DEFAULT_BODY_LIMIT): Promise<Body> {
  let read = reads.get(request);
  if (!read) {
    read = readAndParse(request, limit);
    // Callers see the refusal through the promise below; this one is only kept.
    read.catch(() => {});
    reads.set(request, read);
  }
  return read.then((r) => {
    // A first read with a larger limit does not let this caller's smaller one pass.
    if (r.bytes > limit) throw tooLarge();
    return r.body;
  });
}

/**
 * A JSON document sent with one of `types` (say application/csp-report), any JSON value, under
 * the same rules as readBody: the media type checked first (415), the bytes counted and the read
 * stopped at `limit` (413), malformed JSON and NUL refused (400). Read once, like readBody.
 */
export function readJsonDocument(request: Request, types: readonly string[], limit: number): Promise<unknown> {
  let read = reads.get(request);
  if (!read) {
    read = readAndParse(request, limit, types);
    read.catch(() => {});
    reads.set(request, read);
  }
  return read.then((r) => {
    if (r.bytes > limit) throw tooLarge();
    return r.body;
  });
}

async function readAndParse(request: Request, limit: number, jsonTypes?: readonly string[]): Promise<Read> {
  if (jsonTypes) return readJson(request, limit, jsonTypes);
  const type = mediaType(request);
  const declared = request.headers.get("Content-Length");
  if (type === "") {
    // Nothing sent and nothing declared: an empty form (say, fetch(url, {method: "POST"})).
    if (request.body === null || declared === "0") return { body: {}, bytes: 0 };
    throw new BadRequestError("Unsupported content type.", 415);
  }
  if (type !== FORM_TYPE && type !== JSON_TYPE) throw new BadRequestError("Unsupported content type.", 415);
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge();

  const bytes = await readLimited(request, limit);
  const text = new TextDecoder().decode(bytes);
  if (type === FORM_TYPE) {
    const body = Object.fromEntries(new URLSearchParams(text));
    refuseNul(body);
    return { body, bytes: bytes.byteLength };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequestError("Malformed JSON body.");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new BadRequestError("The JSON body must be an object.");
  }
  refuseNul(value);
  return { body: value as Body, bytes: bytes.byteLength };
}

async function readJson(request: Request, limit: number, types: readonly string[]): Promise<Read> {
  if (!types.includes(mediaType(request))) throw new BadRequestError("Unsupported content type.", 415);
  const declared = request.headers.get("Content-Length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge();
  const bytes = await readLimited(request, limit);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new BadRequestError("Malformed JSON body.");
  }
  refuseNul(value);
  return { body: value as Body, bytes: bytes.byteLength };
}

/**
 * No field of any form we serve holds U+0000, and PostgreSQL cannot store it in text (22021): a
 * NUL that reached a query would be a server error there and not on SQLite. So a body with one
 * anywhere (a value, a key, nested in JSON) is refused as a bad request before anything reads it.
 */
function refuseNul(value: unknown, depth = 0): void {
  if (typeof value === "string") {
    if (value.includes("\u0000")) throw new BadRequestError("NUL in the request body.");
    return;
  }
  if (value === null || typeof value !== "object") return;
  // JSON.parse already bounds the depth by the body size; this bounds our own recursion.
  if (depth > 64) throw new BadRequestError("The request body is nested too deeply.");
  for (const [key, item] of Object.entries(value)) {
    if (key.includes("\u0000")) throw new BadRequestError("NUL in the request body.");
    refuseNul(item, depth + 1);
  }
}

/** The body's bytes, counted as they arrive; past `limit` the read stops and the rest is left unread. */
async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  if (request.bodyUsed) throw new BadRequestError("Request body already read.");
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      // The client went away mid-body, or the stream broke: nothing to parse.
      throw new BadRequestError("The request body could not be read.");
    }
    const { done, value } = chunk;
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      // The rest stays on the connection, unread: the lock is released but the stream is not
      // cancelled, because cancelling the Node adapter's stream destroys the request and with it
      // the socket, so the client could see a reset instead of the 413 (ADR 024). Unread, the
      // adapter's queue fills to its high-water mark and pauses the socket: memory stays bounded.
      reader.releaseLock();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** The answer to a refused body: the 400 "Bad request.", or 413/415 saying what to change. */
export function refusedBodyResponse(error: BadRequestError): Response {
  return error.status === 400 ? badRequest() : badRequest(error.status, error.message);
}
