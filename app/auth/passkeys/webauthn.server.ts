// @simplewebauthn/server, loaded by the first passkey ceremony rather than when the server starts:
// about 5 MB of heap that a server whose visitors never use a passkey never holds (docs/decisions/094).
type WebAuthn = typeof import("@simplewebauthn/server");

let loading: Promise<WebAuthn> | undefined;

export function webauthn(): Promise<WebAuthn> {
  return (loading ??= import("@simplewebauthn/server"));
}
