// GET /auth/webauthn-options/passkey?action=authenticate|register → {"action","options"} and a
// challenge in the sealed authjs.challenge cookie, as Auth.js answers it. Authentication asks for
// a discoverable credential (no address, no allow list, so the browser's autofill can offer it);
// registration is only for a signed-in user and adds to that user (ADR 040). Both require user
// verification. Without `action`, as Auth.js: a signed-out browser authenticates; a signed-in one
// must say which it wants.
import type { generateAuthenticationOptions } from "@simplewebauthn/server";
import { db } from "../../db/client.server";
import { WEBAUTHN_OPTIONS_ERRORS } from "../core/errors";
import type { AuthRequest } from "../core/request.server";
import { jsonResponse } from "../core/respond.server";
import { isRecentAuth } from "../core/recent-auth.server";
import { getSession } from "../core/session.server";
import { sessionMayAddExemptMethod } from "../signin/flow.server";
import { issueChallenge } from "./challenge.server";
import { relyingParty } from "./relying-party.server";
import { webauthn } from "./webauthn.server";

type AllowedTransports = NonNullable<NonNullable<Parameters<typeof generateAuthenticationOptions>[0]["allowCredentials"]>[number]["transports"]>;

/** Milliseconds the browser gives the person to answer (it is a hint; the cookie lasts 900 s). */
const CEREMONY_TIMEOUT_MS = 5 * 60 * 1000;

function refusal(kind: keyof typeof WEBAUTHN_OPTIONS_ERRORS): Response {
  const { status, error } = WEBAUTHN_OPTIONS_ERRORS[kind];
  return jsonResponse({ error }, { status, noCache: true });
}

/** The bytes authenticators keep as the account's user handle: the user id (never an address). */
export function userHandle(userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(userId, "utf8"));
}

/** Options allowing only `userId`'s own passkeys, for a ceremony that proves that user; null when they have none. */
async function ownPasskeyOptions(ar: AuthRequest, userId: string, action: "reauthenticate" | "second-step"): Promise<Response | null> {
  const own = await db().passkey.findMany({ where: { userId }, select: { credentialId: true, transports: true } });
  if (own.length === 0) return null;
  const options = await (await webauthn()).generateAuthenticationOptions({
    rpID: relyingParty(ar).id,
    userVerification: "required",
    timeout: CEREMONY_TIMEOUT_MS,
    allowCredentials: own.map((p) => ({ id: p.credentialId, transports: p.transports ? (p.transports.split(",") as AllowedTransports) : undefined })),
  });
  const cookie = await issueChallenge(ar, options.challenge, action, userId);
  return jsonResponse({ action, options }, { setCookies: [cookie], noCache: true });
}

/**
 * `pendingUserId`: the user of this browser's pending sign-in (the flow reads its sealed cookie),
 * for `action=second-step` (ADR 104): only that user's passkeys are offered and accepted.
 */
export async function webauthnOptionsResponse(ar: AuthRequest, pendingUserId: string | null): Promise<Response> {
  const action = ar.url.searchParams.get("action");
  if (action === "second-step") return (pendingUserId ? await ownPasskeyOptions(ar, pendingUserId, "second-step") : null) ?? refusal("invalidRequest");
  if (action !== null && action !== "authenticate" && action !== "register" && action !== "reauthenticate") return refusal("invalidAction");
  // Read without rolling: this JSON answer is not where a session's cookie is re-issued.
  const { session } = await getSession(ar, { roll: false });
  const decided = action ?? (session ? null : "authenticate");
  if (decided === null) return refusal("invalidRequest");
  const rp = relyingParty(ar);

  if (decided === "authenticate") {
    const options = await (await webauthn()).generateAuthenticationOptions({ rpID: rp.id, userVerification: "required", timeout: CEREMONY_TIMEOUT_MS });
    const cookie = await issueChallenge(ar, options.challenge, "authenticate", null);
    return jsonResponse({ action: "authenticate", options }, { setCookies: [cookie], noCache: true });
  }

  if (decided === "reauthenticate") {
    // /auth/reauth (ADR 080): only the signed-in user's own passkeys are offered and accepted.
    if (!session) return refusal("invalidRequest");
    return (await ownPasskeyOptions(ar, session.userId, "reauthenticate")) ?? refusal("invalidRequest");
  }

  if (!session) return refusal("signInToRegister");
  // A passkey outlives "sign out everywhere" and a new password: only a recent sign-in adds one (ADR 042, 058).
  if (!(await isRecentAuth(ar, session))) return refusal("signInAgainToRegister");
  const user = await db().user.findUnique({
    where: { id: session.userId },
    select: { id: true, email: true, name: true, passkeys: { select: { credentialId: true, transports: true } } },
  });
  if (!user) return refusal("signInToRegister");
  if (!(await sessionMayAddExemptMethod(session.userId, session.sessionId, ar.config))) return refusal("secondFactorToRegister");
  const options = await (await webauthn()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email ?? user.name ?? user.id,
    userDisplayName: user.name ?? user.email ?? "",
    userID: userHandle(user.id),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: "none",
    // The same authenticator is not registered twice for one account.
    excludeCredentials: user.passkeys.map((p) => ({ id: p.credentialId, transports: p.transports ? p.transports.split(",") : undefined })),
    // A discoverable credential (signs in without an address) that verifies its user.
    authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "required" },
  });
  const cookie = await issueChallenge(ar, options.challenge, "register", user.id);
  return jsonResponse({ action: "register", options }, { setCookies: [cookie], noCache: true });
}
