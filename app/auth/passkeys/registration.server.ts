// POST /auth/callback/passkey with action=register: a signed-in user adds a passkey. The answer
// must verify against a register challenge issued to this same user in this browser; the passkey
// and the spent challenge are written in one transaction. It answers like a sign-in (a redirect to
// callbackUrl, by default /account; `{url}` for JSON clients) but starts no new session: the user
// is already signed in, and a passkey never creates a user (ADR 040). Under AUTH_REQUIRE_MFA a
// one-factor session is renewed with the passkey it just proved (ADR 104).
import { db } from "../../db/client.server";
import { describeDevice } from "../../components/device";
import { t } from "../../i18n/t.server";
import type { AuthRequest } from "../core/request.server";
import { MAX_PASSKEY_NAME } from "./manage.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { AuthError } from "../core/errors";
import { log } from "../core/log.server";
import { redirectResponse } from "../core/respond.server";
import { isRecentAuth } from "../core/recent-auth.server";
import { getSession, renewAuthentication } from "../core/session.server";
import { notifySecurityChange, sendQueuedNotices } from "../accounts/security-notices.server";
import { sessionProvedTwoFactors } from "../accounts/second-factor-gate.server";
import { sessionMayAddExemptMethod } from "../signin/flow.server";
import type { FlowContext } from "../signin/provider";
import { forgetExpiredChallenges, isRefusedWrite, spendChallenge, takeChallenge } from "./challenge.server";
import { parseRegistration, signedChallenge } from "./credential-response.server";
import { relyingParty } from "./relying-party.server";
import { webauthn } from "./webauthn.server";

/**
 * A new passkey's name until its owner renames it, in the language of the page it was added from
 * and named after the device that made it: "Passkey (Firefox on Linux)", then "Passkey 2 (Firefox
 * on Linux)"; "Passkey", "Passkey 2" for a device with no name — never a name the owner already
 * has for another passkey.
 */
async function defaultName(ar: AuthRequest, userId: string): Promise<string> {
  const userAgent = ar.request.headers.get("User-Agent");
  const device = userAgent ? describeDevice(userAgent, t) : null;
  const named = device !== null && device !== t("device.unknown") ? device : null;
  const nameFor = (n: number) =>
    (named
      ? n === 1
        ? t("passkey.defaultName", { device: named })
        : t("passkey.defaultNameNumbered", { device: named, n })
      : n === 1
        ? t("passkey.defaultNameBare")
        : t("passkey.defaultNameBareNumbered", { n })
    ).slice(0, MAX_PASSKEY_NAME);
  const taken = new Set((await db().passkey.findMany({ where: { userId }, select: { name: true } })).map((p) => p.name));
  let n = 1;
  while (taken.has(nameFor(n))) n++;
  return nameFor(n);
}

export async function registerPasskey(ctx: FlowContext, providerId: string): Promise<Response> {
  const { ar } = ctx;
  const { session } = await getSession(ar, { roll: false });
  if (!session) throw new AuthError("SessionRequired", { log: "passkey registration without a session" });
  // Checked again here: a challenge fetched while the sign-in was fresh does not outlast it (ADR 042, 058).
  if (!(await isRecentAuth(ar, session))) throw new AuthError("SessionRequired", { log: "passkey registration without a recent sign-in" });
  // A passkey skips the second factor: only a session that proved it may add one (ADR 045).
  if (!(await sessionMayAddExemptMethod(session.userId, session.sessionId, ar.config))) {
    throw new AuthError("SessionRequired", { log: "passkey registration by a session that did not prove the second factor" });
  }
  const response = parseRegistration(ctx.body.data);
  if (!response) throw new AuthError("WebAuthnVerificationError", { log: "malformed registration response" });

  const { entry, setCookie } = await takeChallenge(ar, signedChallenge(response.response.clientDataJSON));
  ctx.setCookies.push(setCookie);
  if (!entry || entry.action !== "register" || entry.userId !== session.userId) {
    throw new AuthError("WebAuthnVerificationError", { log: "no register challenge for this user in this browser" });
  }

  const rp = relyingParty(ar);
  let info;
  try {
    const verification = await (await webauthn()).verifyRegistrationResponse({
      response,
      expectedChallenge: entry.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
    if (!verification.verified) throw new Error("registration not verified");
    info = verification.registrationInfo;
  } catch (error) {
    throw new AuthError("WebAuthnVerificationError", { log: "registration did not verify", cause: (error as Error).message });
  }

  const { credential, credentialDeviceType, credentialBackedUp } = info;
  const name = await defaultName(ar, session.userId);
  try {
    await db().$transaction(async (tx) => {
      await spendChallenge(tx, entry);
      await tx.passkey.create({
        data: {
          userId: session.userId,
          credentialId: credential.id,
          publicKey: Buffer.from(credential.publicKey).toString("base64url"),
          counter: BigInt(credential.counter),
          transports: credential.transports?.length ? credential.transports.join(",") : null,
          deviceType: credentialDeviceType,
          backedUp: credentialBackedUp,
          name,
        },
      });
      await notifySecurityChange(ar, session.userId, { kind: "passkey-added", name }, { tx });
    });
  } catch (error) {
    // A spent challenge, a credential registered already (here or to another user), or the user
    // deleted meanwhile: nothing was written. Anything else is the database failing.
    if (!isRefusedWrite(error)) throw error;
    // The same answer posted twice (a double click, a resubmitted form): the first stored this
    // passkey for this user. The second changes nothing and lands where the first did.
    const stored = await db().passkey.findUnique({ where: { credentialId: credential.id }, select: { userId: true } });
    if (stored?.userId === session.userId) {
      log("info", "passkey-registration-repeated", {});
      return redirectResponse(registrationTarget(ctx), { json: ctx.json, setCookies: ctx.setCookies });
    }
    log("info", "passkey-registration-refused", { reason: (error as { code?: string }).code });
    throw new AuthError("WebAuthnVerificationError", { log: "passkey not stored" });
  }
  sendQueuedNotices();
  await recordEvent("passkey-added", { userId: session.userId, ...eventSource(ar), detail: { provider: providerId, deviceType: credentialDeviceType } });
  await forgetExpiredChallenges().catch(() => {});
  // Under AUTH_REQUIRE_MFA a one-factor session that set up its user's first second factor proved
  // it here (a passkey with user verification): it goes on as a two-factor session, under a new id,
  // so a copy of its one-factor cookie is signed out rather than upgraded (ADR 104).
  if (ar.config.requireMfa && !(await sessionProvedTwoFactors(session.userId, session.sessionId))) {
    ctx.setCookies.push(...((await renewAuthentication(ar, session, { factors: ["hwk", "mfa"] })) ?? []));
  }
  return redirectResponse(registrationTarget(ctx), { json: ctx.json, setCookies: ctx.setCookies });
}

/**
 * Where an added passkey lands: the callbackUrl this request named; by default /account (not the
 * cookie's, which names where the last sign-in went).
 */
function registrationTarget(ctx: FlowContext): string {
  const named = ctx.body.callbackUrl !== undefined && ctx.body.callbackUrl !== "" ? true : ctx.ar.url.searchParams.has("callbackUrl");
  return named ? ctx.callbackUrl : `${ctx.ar.origin}/account`;
}
