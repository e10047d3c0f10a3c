// What the visitor typed survives a change of language (issue 32). The language menu is its own
// form: posting it reloads the page, and the fields of the page's other forms would come back
// empty. With JavaScript, the menu notes the page's typed values first — never a password or a
// hidden field — in this tab's sessionStorage, and the page puts them back once it has run, into
// the fields that are still empty. Without JavaScript the browser has nothing to keep them in.
const KEY = "vestibule.kept-fields";

/** Fields whose values may be kept: what the visitor typed, not secrets. */
const KEPT_TYPES = new Set(["text", "email", "search", "tel", "url"]);

function keptInputs(root: ParentNode): HTMLInputElement[] {
  return [...root.querySelectorAll<HTMLInputElement>("main input[id]")].filter((input) => KEPT_TYPES.has(input.type) && input.autocomplete !== "one-time-code");
}

/** Notes the typed values of the page's fields, for the page at `path` (this page, reloaded). */
export function keepTypedFields(path: string): void {
  const values: Record<string, string> = {};
  for (const input of keptInputs(document)) if (input.value !== "") values[input.id] = input.value;
  try {
    if (Object.keys(values).length) sessionStorage.setItem(KEY, JSON.stringify({ path, values }));
  } catch {
    // Storage off or full: the page reloads as it would have.
  }
}

/** Puts back the values noted for this page into its fields that are still empty; forgets them either way. */
export function restoreTypedFields(path: string): void {
  let kept: { path?: unknown; values?: unknown } | null = null;
  try {
    kept = JSON.parse(sessionStorage.getItem(KEY) ?? "null");
    sessionStorage.removeItem(KEY);
  } catch {
    return;
  }
  if (!kept || kept.path !== path || typeof kept.values !== "object" || kept.values === null) return;
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set;
  for (const input of keptInputs(document)) {
    const value = (kept.values as Record<string, unknown>)[input.id];
    if (typeof value !== "string" || input.value !== "") continue;
    // As if typed: React's onChange sees it for a controlled field.
    setValue?.call(input, value);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  }
}
