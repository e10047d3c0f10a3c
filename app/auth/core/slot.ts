// A value that belongs to one Request or Response for as long as that object lives: the parsed
// view of a request, its body once read, an answer's text beside it. Kept as a property of the
// object under a symbol of its own — not enumerable, so a spread, Object.assign or util.inspect
// of the object does not carry or show it (the parsed view holds the cookies and the secrets) —
// never in a WeakMap keyed by the object: a WeakMap outlives
// every request in the old generation, and V8's young collections keep what such a table holds
// (and, through it, the whole request) until a Mark-Compact, so every request was promoted and
// the Mark-Compacts ran several times a second (docs/decisions/096).

export type Slot<Owner extends object, Value> = {
  get(owner: Owner): Value | undefined;
  set(owner: Owner, value: Value): void;
};

/** A slot named `name` (the symbol's description, for a debugger) on objects of type Owner. */
export function slot<Owner extends object, Value>(name: string): Slot<Owner, Value> {
  const key = Symbol(name);
  type Holder = Owner & { [key]?: Value };
  return {
    get: (owner) => (owner as Holder)[key],
    set: (owner, value) => {
      Object.defineProperty(owner, key, { value, writable: true, configurable: true, enumerable: false });
    },
  };
}
