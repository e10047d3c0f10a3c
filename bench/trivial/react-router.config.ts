// The framework floor of `npm run bench` (contract §9): a React Router app with one resource route
// and nothing else — no middleware, no root loader, no auth — built and served the way the app is.
import type { Config } from "@react-router/dev/config";

export default { ssr: true } satisfies Config;
