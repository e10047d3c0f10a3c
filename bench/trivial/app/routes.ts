import { type RouteConfig, route } from "@react-router/dev/routes";

export default [route("auth/session", "routes/json.ts")] satisfies RouteConfig;
