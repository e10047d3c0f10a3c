// Removing a way to sign in ends the sessions it started (contract section 13), this browser's
// included when it signed in that way: its cookies are cleared and it goes to the sign-in page.
import { redirect } from "react-router";
import { endSession, headersWith, type AuthRequest } from "~/auth/core";

export async function signedOutByRemoval(ar: AuthRequest): Promise<never> {
  const ended = await endSession(ar);
  throw redirect(`${ar.config.basePath}/signin?callbackUrl=%2Faccount`, { headers: headersWith(ended.setCookies) });
}
