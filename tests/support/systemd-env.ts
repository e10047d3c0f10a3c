// An EnvironmentFile= as systemd reads it, written from systemd.exec(5) ("EnvironmentFile=") and
// independent of the app's loader (app/auth/core/env-file.server.ts), so a test can hold the two
// side by side: empty lines and lines starting with # or ; are skipped; leading and trailing
// whitespace is dropped; an unquoted value keeps inner whitespace and quotes, a backslash keeps the
// next character and one at the end of a line continues it; a '…' value is verbatim and may span
// lines; a "…" value may span lines and knows the escapes \" \\ \` \$ (any other backslash stays).
// No machine here runs systemd as PID 1, so its own parser cannot be asked.
export function parseSystemdEnvironmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  let i = 0;
  const n = text.length;
  const blank = (c: string | undefined) => c === " " || c === "\t" || c === "\r";
  while (i < n) {
    while (i < n && (blank(text[i]) || text[i] === "\n")) i++;
    if (i >= n) break;
    if (text[i] === "#" || text[i] === ";") {
      while (i < n && text[i] !== "\n") i++;
      continue;
    }
    let key = "";
    while (i < n && text[i] !== "=" && text[i] !== "\n") key += text[i++];
    if (text[i] !== "=") continue; // a line without "=" is ignored
    i++;
    key = key.replace(/[ \t\r]+$/, "");
    while (i < n && blank(text[i])) i++;
    let value = "";
    if (text[i] === "'") {
      i++;
      while (i < n && text[i] !== "'") value += text[i++];
      i++;
      while (i < n && text[i] !== "\n") i++;
    } else if (text[i] === '"') {
      i++;
      while (i < n && text[i] !== '"') {
        if (text[i] === "\\" && i + 1 < n) {
          const next = text[i + 1]!;
          if (next === "\n") i += 2;
          else if ('"\\`$'.includes(next)) {
            value += next;
            i += 2;
          } else {
            value += `\\${next}`;
            i += 2;
          }
        } else value += text[i++];
      }
      i++;
      while (i < n && text[i] !== "\n") i++;
    } else {
      while (i < n && text[i] !== "\n") {
        if (text[i] === "\\" && i + 1 < n) {
          if (text[i + 1] !== "\n") value += text[i + 1];
          i += 2;
        } else value += text[i++];
      }
      value = value.replace(/[ \t\r]+$/, "");
    }
    env[key] = value;
  }
  return env;
}
