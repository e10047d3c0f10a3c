// Answers whose text depends on the negotiated language say so, so a cache
// never serves one visitor's language to another: pages (documents and React Router's .data
// requests) and redirects from pages carry `Vary: Accept-Language, Cookie`. The JSON endpoints
// under the auth base path do not change with the language and are left as they are.
import { withHeaders } from "../auth/core/security-headers.server";

const LANGUAGE_INPUTS = ["Accept-Language", "Cookie"];

function answersInLanguage(response: Response): boolean {
  return !(response.headers.get("Content-Type") ?? "").includes("json");
}

/** Adds Accept-Language and Cookie to the answer's Vary (keeping what is there). */
export function varyOnLanguage(response: Response): Response {
  if (!answersInLanguage(response)) return response;
  const present = (response.headers.get("Vary") ?? "").split(",").map((v) => v.trim()).filter(Boolean);
  if (present.includes("*")) return response;
  const lower = new Set(present.map((v) => v.toLowerCase()));
  const missing = LANGUAGE_INPUTS.filter((name) => !lower.has(name.toLowerCase()));
  return missing.length ? withHeaders(response, { Vary: [...present, ...missing].join(", ") }) : response;
}
