// Which sign-ins the second factor covers (ADR 043), decided by the kind of sign-in method (the
// provider type), so a method added later is covered or exempt by what it is, not by its id.
// The names are amr values (RFC 8176) where one fits, as the session records them.

/** The factor each kind of first sign-in proves. */
const FIRST_FACTORS: Readonly<Record<string, string>> = {
  credentials: "pwd",
  email: "email",
  oauth: "fed",
  oidc: "fed",
  // A passkey with user verification: something you have (the key) and something you are or know
  // (the biometric or PIN that unlocked it).
  webauthn: "hwk",
};

/**
 * Provider types whose sign-in already proves two factors. A passkey is exempt: WebAuthn with
 * user verification required is multi-factor by itself.
 */
const MULTI_FACTOR_TYPES: ReadonlySet<string> = new Set(["webauthn"]);

export function firstFactorOf(providerType: string): string {
  return FIRST_FACTORS[providerType] ?? "other";
}

/** The factors a sign-in with `providerType` proves before any second factor. */
export function factorsOf(providerType: string): string[] {
  return MULTI_FACTOR_TYPES.has(providerType) ? [firstFactorOf(providerType), "mfa"] : [firstFactorOf(providerType)];
}

/** True when a sign-in of this kind must still show a second factor (for users who turned it on). */
export function needsSecondFactor(providerType: string): boolean {
  return !MULTI_FACTOR_TYPES.has(providerType);
}

/** The amr-like name of each second factor that can complete a pending sign-in. */
const SECOND_FACTORS = { totp: "otp", recovery: "rcv", passkey: "hwk" } as const;

/** The factors after a second factor completed a pending sign-in. */
export function withSecondFactor(firstFactor: string, second: keyof typeof SECOND_FACTORS): string[] {
  return [firstFactor, SECOND_FACTORS[second], "mfa"];
}

/**
 * The kind of sign-in a visitor reads for a session: a session begun by a password reset (the
 * password method, proved by the e-mailed link or code rather than by the password) is "reset",
 * so that lists say "Signed in by resetting the password" and not "with a password"; any other
 * session is its provider's type.
 */
export function sessionSignInKind(providerType: string, factors: readonly string[]): string {
  if (providerType === "credentials" && factors.includes(FIRST_FACTORS.email!) && !factors.includes(FIRST_FACTORS.credentials!)) return "reset";
  return providerType;
}
