// SAML 2.0 connections of organizations (docs/features/saml.md): the routes' entry points.
export { ACS_BODY_LIMIT, acsRateLimited, connectionFor, consumeAssertion, finishSignIn, metadataResponse, startSignIn } from "./sp.server";
export { ACS_PATH_PATTERN, acsPath, metadataPath, startPath } from "./paths";
export {
  addCertificates,
  addCertificatesAs,
  addConnection,
  addConnectionAs,
  idpSettingsFrom,
  listConnections,
  removeCertificate,
  removeCertificateAs,
  removeConnection,
  removeConnectionAs,
  setIdpInitiatedAs,
  type ConnectionRefusal,
} from "./connections.server";
export { IDP_METADATA_MAX_BYTES, setIdpMetadataFetchTestSeam, type IdpMetadataFailure } from "./idp-metadata.server";
