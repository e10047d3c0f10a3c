// oidc-provider, loaded the first time the provider needs it rather than at the server's start:
// the library and what it brings (Koa and its middleware) hold about 40 MB of a process's memory,
// which a server with AUTH_PROVIDER off never uses (ADR 182). Loaded by require — Node loads an ES
// module that way, synchronously — so the modules that use it at run time need no await; their
// types come from type-only imports, which load nothing.
import { createRequire } from "node:module";

type Library = typeof import("oidc-provider");

const load = createRequire(import.meta.url);
let loaded: Library | null = null;

/** The library, loaded on first use. */
export function engineLibrary(): Library {
  return (loaded ??= load("oidc-provider") as Library);
}

/** The library if something already loaded it, else null: a request the engine is not serving has no engine context to read. */
export function engineLibraryIfLoaded(): Library | null {
  return loaded;
}
