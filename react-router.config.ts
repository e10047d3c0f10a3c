import type { Config } from "@react-router/dev/config";

export default {
  ssr: true,
  // React Router's own check of a page POST's Origin (400 "Bad Request", against the request URL
  // rather than AUTH_URL, pages only) gives way to the app's: the root middleware and the CSRF
  // check refuse a POST from another site on every route — 403, or MissingCSRF on the sign-in
  // flow — against the app's origin (docs/decisions/037-csp-and-origin.md). "**" matches every
  // host, so React Router refuses none itself.
  allowedActionOrigins: ["**"],
} satisfies Config;
