// The `data` field of POST /auth/callback/passkey: the browser's credential response as JSON
// (what @simplewebauthn/browser's startRegistration / startAuthentication return, JSON-encoded by
// next-auth/webauthn or our own page). Checked here, before any query or verification, so garbage
// becomes one refusal and never an exception further down.
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { z } from "zod";

/** Longest base64url field accepted (a COSE key and attestation fit easily; the body limit is 64 KiB). */
const MAX_FIELD = 16_384;
const base64url = (max = MAX_FIELD) => z.string().min(1).max(max).regex(/^[A-Za-z0-9_-]+={0,2}$/);

/**
 * The transports WebAuthn defines (AuthenticatorTransportFuture). The browser reports them and we
 * store them to hand back in later options, so anything else — markup, a comma that would split
 * into extra entries on reading, control characters — is dropped rather than kept; an unknown
 * future transport only costs the browser a hint.
 */
const KNOWN_TRANSPORTS: ReadonlySet<string> = new Set(["ble", "cable", "hybrid", "internal", "nfc", "smart-card", "usb"]);
const Transports = z
  .array(z.string().max(32))
  .max(10)
  .transform((list) => [...new Set(list.filter((t) => KNOWN_TRANSPORTS.has(t)))]);

const Common = {
  id: base64url(1_366),
  rawId: base64url(1_366),
  type: z.literal("public-key"),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
};

const Registration = z.object({
  ...Common,
  response: z.object({
    clientDataJSON: base64url(),
    attestationObject: base64url(),
    authenticatorData: base64url().optional(),
    transports: Transports.optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: base64url().optional(),
  }),
});

const Authentication = z.object({
  ...Common,
  response: z.object({
    clientDataJSON: base64url(),
    authenticatorData: base64url(),
    signature: base64url(),
    userHandle: base64url(1_366).optional(),
  }),
});

const ClientData = z.object({ challenge: base64url(1_366) });

function parseData(data: unknown): unknown {
  if (typeof data !== "string") return data;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

export function parseRegistration(data: unknown): RegistrationResponseJSON | null {
  const parsed = Registration.safeParse(parseData(data));
  return parsed.success ? (parsed.data as RegistrationResponseJSON) : null;
}

export function parseAuthentication(data: unknown): AuthenticationResponseJSON | null {
  const parsed = Authentication.safeParse(parseData(data));
  return parsed.success ? (parsed.data as AuthenticationResponseJSON) : null;
}

/** The challenge the browser signed, read from clientDataJSON (to pick the cookie's entry); null when unreadable. */
export function signedChallenge(clientDataJSON: string): string | null {
  try {
    const parsed = ClientData.safeParse(JSON.parse(Buffer.from(clientDataJSON, "base64url").toString("utf8")));
    return parsed.success ? parsed.data.challenge : null;
  } catch {
    return null;
  }
}
