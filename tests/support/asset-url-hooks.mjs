// For the instance processes (other-instance.ts): an `import x from "./file.css?url"` (Vite's
// asset URL import, which the provider's pages use for the stylesheet) is answered with the file's
// URL, as Vite answers it with the built file's, instead of Node refusing the unknown extension.
import { register } from "node:module";

register(
  "data:text/javascript," +
    encodeURIComponent(`
export async function load(url, context, next) {
  if (/\\.css(\\?|$)/.test(url)) return { format: "module", source: "export default " + JSON.stringify(url), shortCircuit: true };
  return next(url, context);
}
`),
);
