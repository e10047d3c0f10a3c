// What an MCP client application keeps between its requests, for the MCP SDK's OAuth: its
// registration, its tokens and PKCE verifier, and the authorization URL it would open in the
// system browser (kept in `opened` for the test to follow). A public client (no secret) asking for
// the code and refresh grants, as MCP clients do.
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

export class MemoryClientProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  opened: URL | null = null;

  /** `redirectUri` is read when the SDK asks (a test may know its callback server's port only later). */
  constructor(
    private readonly clientName: string,
    private readonly redirectUri: () => string,
  ) {}

  get redirectUrl() {
    return this.redirectUri();
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.clientName, redirect_uris: [this.redirectUri()], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.opened = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}
