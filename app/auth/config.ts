// What app/auth.config.ts imports: the function that types the app's auth configuration.
export { defineAuthConfig, type AuthConfig, type JsonValue, type RoleDefinition, type SessionUserRow } from "./core/app-config";
