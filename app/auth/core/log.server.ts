// One structured JSON line per event on stdout/stderr. Causes of failures are logged here and
// nowhere else: responses carry only error codes.
type Level = "error" | "warn" | "info" | "debug";

export function log(level: Level, event: string, fields: Record<string, unknown> = {}) {
  if (process.env.VESTIBULE_LOG === "silent") return;
  const line = JSON.stringify({ at: new Date().toISOString(), level, event, ...fields }, replacer);
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
}

function replacer(_key: string, value: unknown) {
  if (value instanceof Error) {
    return { name: value.name, message: value.message, cause: value.cause instanceof Error ? value.cause.message : value.cause };
  }
  return value;
}
