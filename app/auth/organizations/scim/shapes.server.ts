// The small layer in front of scimmy that absorbs what identity providers really send (docs/
// features/scim.md, ADR 158). scimmy implements RFC 7643/7644 as written; Entra ID, Okta and
// Google Workspace depart from it in known ways, each turned here into its standard form:
//  - booleans as strings: `"active": "False"`, `"primary": "true"` (Entra ID);
//  - `op` in any case (`"Replace"`, `"Add"`): scimmy already accepts it; kept lower case here so
//    the rest reads one spelling;
//  - a filtered path on an absent or unmatched array, `emails[type eq "work"].value` (Entra ID,
//    Okta): standard servers answer noTarget; here it adds the element `{type: "work", value}`;
//  - `remove` with a `value` list on `members` (Entra ID) is standard and scimmy honours it.

/** Attributes of the User and Group schemas whose type is boolean (RFC 7643 section 4). */
const BOOLEAN_ATTRIBUTES: ReadonlySet<string> = new Set(["active", "primary"]);

function booleanOf(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const lower = value.trim().toLowerCase();
  return lower === "true" ? true : lower === "false" ? false : value;
}

/** A copy of `value` where every boolean attribute given as "True"/"False" (any case) is a boolean. */
export function withBooleans(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withBooleans);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    out[key] = BOOLEAN_ATTRIBUTES.has(key.toLowerCase()) ? booleanOf(inner) : withBooleans(inner);
  }
  return out;
}

export type PatchOperation = { op: string; path?: string; value?: unknown };

/** The last segment of a path, without a schema URN prefix: `name.givenName` -> `givenName`. */
function leafOf(path: string): string {
  const withoutUrn = path.includes(":") ? path.slice(path.lastIndexOf(":") + 1) : path;
  return withoutUrn.split(".").pop() ?? withoutUrn;
}

const FILTERED_SUB_ATTRIBUTE = /^([A-Za-z][\w$-]*)\[\s*([A-Za-z][\w$-]*)\s+eq\s+"([^"]*)"\s*\]\.([A-Za-z][\w$-]*)$/i;

/**
 * The operations in their standard form, against the resource as it is now (`current`, the SCIM
 * attributes): lower-case `op`, booleans, and an add or replace through a filter that matches no
 * element of the array turned into adding that element.
 */
export function normalisePatch(operations: unknown, current: Record<string, unknown>): unknown {
  if (!Array.isArray(operations)) return operations;
  return operations.map((raw: unknown) => {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
    const operation = raw as PatchOperation;
    const op = typeof operation.op === "string" ? operation.op.toLowerCase() : operation.op;
    const path = typeof operation.path === "string" ? operation.path.trim() : operation.path;
    let value = withBooleans(operation.value);
    if (typeof path === "string" && BOOLEAN_ATTRIBUTES.has(leafOf(path).toLowerCase())) value = booleanOf(value);
    // A path with no value where one is needed (`add` with a `value` of an object keyed by path) stays as is.
    if ((op === "add" || op === "replace") && typeof path === "string") {
      const filtered = FILTERED_SUB_ATTRIBUTE.exec(path);
      if (filtered) {
        const [, attribute, key, wanted, sub] = filtered as unknown as [string, string, string, string, string];
        const list = current[attribute];
        const matches = Array.isArray(list) && list.some((e) => e && typeof e === "object" && String((e as Record<string, unknown>)[key]).toLowerCase() === wanted.toLowerCase());
        if (!matches) return { op: "add", path: attribute, value: [{ [key]: wanted, [sub]: value }] };
      }
    }
    return { ...operation, op, ...(path === undefined ? {} : { path }), ...(operation.value === undefined ? {} : { value }) };
  });
}
