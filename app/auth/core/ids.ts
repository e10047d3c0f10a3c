// The alphabet of the record ids and provider ids that visitors send back to us (a session to
// revoke, a provider to unlink): checked at the boundary, before any query, so nothing outside it
// (NUL, which PostgreSQL refuses in text, control characters, path pieces) ever reaches one.
import { z } from "zod";

/** cuid()s, provider ids such as "oidc" or "github", and base64url ids: letters, digits, - and _. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export const idField = () => z.string().regex(ID_PATTERN);
