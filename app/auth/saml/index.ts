// SAML 2.0 connections of organizations (docs/features/saml.md): the routes' entry points.
export { ACS_BODY_LIMIT, connectionFor, consumeAssertion, metadataResponse, startSignIn } from "./sp.server";
export { ACS_PATH_PATTERN, acsPath, metadataPath, startPath } from "./paths";
export { addConnection, addConnectionAs, listConnections, removeConnection, removeConnectionAs } from "./connections.server";
