// What an e-mailed link or code stands for (the VerificationToken row), shared by the token store
// and the code module without either importing the other.
export type TokenPurpose = "signin" | "change-email" | "signup" | "reset" | "reauth";

/** What a used token or code hands on: who it was for, and a pending sign-up's data. */
export type UsedRequest = { identifier: string; purpose: TokenPurpose; passwordHash: string | null; name: string | null; requestId: string | null };
