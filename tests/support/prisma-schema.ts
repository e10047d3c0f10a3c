// Prisma's own schema parser, for the schema drift tests: turns a .prisma file into the DMMF (the
// description Prisma generates clients from) without the CLI. The parser is the WebAssembly
// module that ships inside the `prisma` package; the CLI bundles its JavaScript glue, so this is
// a minimal glue of its own for the four imports and the one function (`get_dmmf`) used here.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

export type DmmfField = {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "object" | "enum" | "unsupported";
  isList: boolean;
  isRequired: boolean;
  isUnique: boolean;
  isId: boolean;
  type: string;
  hasDefaultValue: boolean;
  default?: unknown;
  isUpdatedAt?: boolean;
  relationName?: string;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
};
export type DmmfModel = {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
  primaryKey: { name: string | null; fields: string[] } | null;
  uniqueFields: string[][];
  uniqueIndexes: { name: string | null; fields: string[] }[];
};
export type DmmfIndex = {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  isDefinedOnField: boolean;
  name?: string;
  dbName?: string;
  fields: { name: string }[];
};
export type Dmmf = { datamodel: { models: DmmfModel[]; enums: unknown[]; types: unknown[]; indexes: DmmfIndex[] } };

type Exports = {
  memory: WebAssembly.Memory;
  get_dmmf(ptr: number, len: number): [number, number, number, number];
  __wbindgen_malloc(size: number, align: number): number;
  __wbindgen_free(ptr: number, size: number, align: number): void;
  __wbindgen_externrefs: WebAssembly.Table;
  __externref_table_dealloc(index: number): void;
  __wbindgen_start(): void;
};

let wasm: Exports | null = null;

function load(): Exports {
  if (wasm) return wasm;
  const require = createRequire(import.meta.url);
  const file = path.join(path.dirname(require.resolve("prisma/package.json")), "build", "prisma_schema_build_bg.wasm");
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const text = (ptr: number, len: number) => decoder.decode(new Uint8Array(wasm!.memory.buffer, ptr >>> 0, len));
  let panic = "";
  const glue = {
    __wbg_set_message_f22ac4a6869ee695: (ptr: number, len: number) => {
      panic = text(ptr, len);
    },
    __wbg_Error_e83987f665cf5504: (ptr: number, len: number) => new Error(text(ptr, len)),
    __wbg___wbindgen_throw_b855445ff6a94295: (ptr: number, len: number) => {
      throw new Error(text(ptr, len) + (panic ? `: ${panic}` : ""));
    },
    __wbindgen_init_externref_table: () => {
      const table = wasm!.__wbindgen_externrefs;
      const base = table.grow(4);
      table.set(0, undefined);
      table.set(base, undefined);
      table.set(base + 1, null);
      table.set(base + 2, true);
      table.set(base + 3, false);
    },
  };
  const module = new WebAssembly.Module(readFileSync(file));
  const missing = WebAssembly.Module.imports(module).filter((i) => !(i.name in glue));
  if (missing.length) {
    throw new Error(
      `${file} expects imports this glue does not provide (${missing.map((i) => i.name).join(", ")}); ` +
        "the prisma package changed: update tests/support/prisma-schema.ts",
    );
  }
  wasm = new WebAssembly.Instance(module, { __wbindgen_placeholder__: glue }).exports as unknown as Exports;
  wasm.__wbindgen_start();
  return wasm;
}

/** The DMMF of a Prisma schema, as Prisma's generator sees it. Throws Prisma's validation errors. */
export function getDmmf(schema: string): Dmmf {
  const w = load();
  const input = new TextEncoder().encode(JSON.stringify({ prismaSchema: schema, noColor: true }));
  const ptr = w.__wbindgen_malloc(input.length, 1) >>> 0;
  new Uint8Array(w.memory.buffer, ptr, input.length).set(input);
  const [outPtr, outLen, errIndex, isErr] = w.get_dmmf(ptr, input.length);
  if (isErr) {
    const error = w.__wbindgen_externrefs.get(errIndex) as Error;
    w.__externref_table_dealloc(errIndex);
    throw error;
  }
  try {
    return JSON.parse(new TextDecoder().decode(new Uint8Array(w.memory.buffer, outPtr >>> 0, outLen))) as Dmmf;
  } finally {
    w.__wbindgen_free(outPtr, outLen, 1);
  }
}
