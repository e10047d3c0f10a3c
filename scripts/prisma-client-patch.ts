// Run by `npm run db:generate` after `prisma generate`: the generated client loads its query
// compiler (WebAssembly) by importing a module whose one export is the binary as a 4.4 MB base64
// string. An ES module is never unloaded, so that string and the module's source (another
// 4.4 MB) stayed in the old generation for the life of the process: a fifth of the server's heap,
// weighing on every Mark-Compact's budget and on resident memory (docs/decisions/097).
// The patched client reads the same file as text, decodes it and lets the text go.
// `--check` exits 1 when a generated client is not patched. A client whose shape this does not
// recognise (a Prisma upgrade) fails the command: the patch never silently stops applying.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PROVIDERS, type ProviderName } from "./prisma-derive.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const PATCH_MARK = "// Patched by scripts/prisma-client-patch.ts";

const IMPORTED = /( *)getQueryCompilerWasmModule: async \(\) => \{\n\s*const \{ wasm \} = await import\("(@prisma\/client\/runtime\/query_compiler_[a-z]+_bg\.[a-z]+\.wasm-base64\.mjs)"\)\n\s*return await decodeBase64AsWasm\(wasm\)\n\s*\},/;

export function clientClassPath(provider: ProviderName) {
  return path.join(root, "prisma", "generated", provider, "internal", "class.ts");
}

/** The generated class.ts with the query compiler read from its file; throws on a shape it does not know. */
export function patchClientClass(source: string): string {
  if (source.includes(PATCH_MARK)) return source;
  const found = IMPORTED.exec(source);
  if (!found) throw new Error("the generated client does not load its query compiler the way this patch expects (a Prisma upgrade?): see docs/decisions/097");
  const [, indent, specifier] = found;
  const body = [
    `${PATCH_MARK} (docs/decisions/097): the base64 text is read, decoded and dropped,`,
    `// not imported (a module's export and source would stay on the heap for good).`,
    `getQueryCompilerWasmModule: async () => {`,
    `  const { readFileSync } = await import("node:fs")`,
    `  const { createRequire } = await import("node:module")`,
    `  const text = readFileSync(createRequire(import.meta.url).resolve(${JSON.stringify(specifier)}), "utf8")`,
    `  const start = text.indexOf('"') + 1`,
    `  return await decodeBase64AsWasm(text.slice(start, text.indexOf('"', start)))`,
    `},`,
  ]
    .map((line) => indent + line)
    .join("\n");
  return source.replace(IMPORTED, body);
}

function main() {
  const check = process.argv.includes("--check");
  let unpatched = 0;
  for (const provider of Object.keys(PROVIDERS) as ProviderName[]) {
    const file = clientClassPath(provider);
    const source = readFileSync(file, "utf8");
    if (source.includes(PATCH_MARK)) continue;
    if (check) {
      console.error(`not patched: ${path.relative(root, file)} (run npm run db:generate)`);
      unpatched++;
    } else {
      writeFileSync(file, patchClientClass(source));
      console.log(`patched ${path.relative(root, file)}: the query compiler is read from its file`);
    }
  }
  if (unpatched) process.exit(1);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
