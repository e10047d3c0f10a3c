// OpenID Connect connections of organizations (ADR 151, 164; docs/features/oidc-connections.md): the routes' entry points.
export { finishOidcSignIn, oidcConnectionFor, startOidcSignIn } from "./flow.server";
export { addOidcConnection, addOidcConnectionAs, listOidcConnections, oidcConnectionsForDomain, removeOidcConnection, removeOidcConnectionAs } from "./connections.server";
export { OIDC_CONNECTION_METHOD, oidcCallbackPath, oidcSignInPath } from "./paths";
