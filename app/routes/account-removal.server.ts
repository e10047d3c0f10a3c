// Removing a way to sign in ends the sessions it started, this browser's
// included when it signed in that way: its cookies are cleared and it goes to the sign-in page,
// whose notice says why this device was signed out and to sign in another way.
import { redirect } from "react-router";
import { endSession, headersWith, type AuthRequest } from "~/auth/core";

export async function signedOutByRemoval(ar: AuthRequest): Promise<never> {
  const ended = await endSession(ar);
  throw redirect(`${ar.config.basePath}/signin?notice=SignInMethodRemoved&callbackUrl=%2Faccount`, { headers: headersWith(ended.setCookies) });
}
