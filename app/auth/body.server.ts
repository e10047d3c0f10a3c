// Reads a POST body once, with a size limit, as a plain object: form-encoded, multipart or JSON.
// Anything else, malformed JSON, or a JSON value that is not an object, is a BadRequestError.

export const DEFAULT_BODY_LIMIT = 64 * 1024;

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

async function readLimited(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get("Content-Length") ?? "0");
  if (declared > limit) throw new BadRequestError("Request body too large.", 413);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new BadRequestError("Request body too large.", 413);
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

export async function readBody(request: Request, limit = DEFAULT_BODY_LIMIT): Promise<Body> {
  const type = (request.headers.get("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "multipart/form-data") {
    const declared = Number(request.headers.get("Content-Length") ?? "0");
    if (declared > limit) throw new BadRequestError("Request body too large.", 413);
    const text = await readLimited(request, limit);
    let form: FormData;
    try {
      form = await new Response(text, { headers: { "Content-Type": request.headers.get("Content-Type")! } }).formData();
    } catch {
      throw new BadRequestError("Malformed form body.");
    }
    const out: Body = {};
    for (const [k, v] of form) if (typeof v === "string") out[k] = v;
    return out;
  }
  const text = await readLimited(request, limit);
  if (type === "application/json") {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new BadRequestError("Malformed JSON body.");
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new BadRequestError("The JSON body must be an object.");
    }
    return value as Body;
  }
  if (type === "application/x-www-form-urlencoded" || (type === "" && text === "")) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  throw new BadRequestError("Unsupported content type.", 415);
}
