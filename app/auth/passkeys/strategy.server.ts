// Passkey sign-in, on Auth.js's wire protocol: provider id `passkey`, type
// `webauthn`. POST /auth/callback/passkey carries `csrfToken`, `action`, `data` (the JSON
// credential response) and `callbackUrl`. action=authenticate runs the strategy below through the
// shared flow (session with method `passkey`, device cookie, audit, redirect or `{url}`), so a
// second-factor gate can recognise it by the provider's type; action=register adds a passkey to the
// signed-in user (registration.server.ts). Options: options.server.ts.
import type { AuthenticationResponseJSON, WebAuthnCredential } from "@simplewebauthn/server";
import { Strategy } from "remix-auth/strategy";
import { db } from "../../db/client.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { passkeyCredentialRef, toSessionUser, type SignInResult } from "../accounts/users.server";
import type { AuthConfig } from "../core/config.server";
import { AuthError } from "../core/errors";
import { readBody, type Body } from "../core/body.server";
import { isLimitRefusal, reservePasskeyAnswer } from "../core/limits.server";
import { authRequest, clientAddress, type AuthRequest } from "../core/request.server";
import { runStrategy } from "../signin/flow.server";
import type { FlowContext, Provider, ReauthContext, ReauthOutcome, SignInMethod } from "../signin/provider";
import { log } from "../core/log.server";
import { limitMessage } from "../core/messages.server";
import { t } from "../../i18n/t.server";
import { forgetExpiredChallenges, isRefusedWrite, spendChallenge, takeChallenge, type CeremonyAction, type PendingChallenge } from "./challenge.server";
import { parseAuthentication, signedChallenge } from "./credential-response.server";
import { userHandle, webauthnOptionsResponse } from "./options.server";
import { registerPasskey } from "./registration.server";
import { relyingParty } from "./relying-party.server";
import { webauthn } from "./webauthn.server";

export const PASSKEY_PROVIDER_ID = "passkey";

/** Another sign-in with the same passkey moved its counter between our read and our write. */
class CounterMoved extends Error {}

const refused = (log: string, cause?: unknown) => new AuthError("WebAuthnVerificationError", { log, cause });

/**
 * A credential nobody has: an unknown credential id is verified against it, so that answer costs
 * the same work as a wrong signature and gives the same refusal.
 */
const UNKNOWN_CREDENTIAL: WebAuthnCredential = {
  id: "unknown",
  // A well-formed COSE EC2 P-256 key (kty 2, alg -7, crv 1, x and y of 32 zero-ish bytes).
  publicKey: new Uint8Array(
    Buffer.from("a5010203262001215820" + "01".repeat(32) + "225820" + "02".repeat(32), "hex"),
  ),
  counter: 0,
};

async function verifyAssertion(ar: AuthRequest, response: AuthenticationResponseJSON, entry: PendingChallenge, credential: WebAuthnCredential) {
  const rp = relyingParty(ar);
  try {
    const verification = await (await webauthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge: entry.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential,
      requireUserVerification: true,
    });
    return verification.verified ? verification.authenticationInfo : null;
  } catch (error) {
    // The library's reason (origin, RP id, UV flag, counter, signature) goes to the log only.
    throw refused("assertion did not verify", (error as Error).message);
  }
}

/** The remix-auth strategy: the credential response in, the passkey's user out. */
class PasskeyStrategy extends Strategy<SignInResult, never> {
  name = PASSKEY_PROVIDER_ID;

  constructor(private readonly config: AuthConfig) {
    super(async () => {
      throw new Error("unused");
    });
  }

  async authenticate(request: Request): Promise<SignInResult> {
    const ar = authRequest(request, this.config);
    // Failures only, per client (ADR 063): checked before the answer is read, so a client past
    // its budget learns nothing more, not even from a right answer; a sign-in gives its point back.
    const reservation = await reservePasskeyAnswer(this.config.rateLimits, clientAddress(ar));
    if (isLimitRefusal(reservation)) {
      await recordEvent("rate-limited", { ...eventSource(ar), detail: { bucket: reservation.limit } });
      throw new AuthError("RateLimited", { log: `passkey limit ${reservation.limit}`, retryAfterSeconds: reservation.retryAfterSeconds, limit: reservation.limit });
    }
    const form = await readBody(request);
    const result = await checkAnswer(ar, form.data, null);
    await reservation.settle(true);
    return result;
  }
}

/**
 * The answer checked: the passkey's user, or a refusal (which stays counted). `reauthOf`: a
 * re-authentication's (ADR 080) or a pending sign-in's second step (`expected` second-step, ADR
 * 104) — its own challenge, for that user, with one of their passkeys.
 */
async function checkAnswer(ar: AuthRequest, data: unknown, reauthOf: string | null, expected: CeremonyAction = reauthOf ? "reauthenticate" : "authenticate"): Promise<SignInResult> {
  const response = parseAuthentication(data);
  if (!response) throw refused("malformed authentication response");
  const { entry } = await takeChallenge(ar, signedChallenge(response.response.clientDataJSON));
  if (!entry || entry.action !== expected || (reauthOf !== null && entry.userId !== reauthOf)) throw refused(`no ${expected} challenge in this browser`);

  const passkey = await db().passkey.findUnique({
    where: { credentialId: response.id },
    include: { user: { select: { id: true, name: true, email: true, image: true } } },
  });
  // Every refusal from here on is recorded (for the owner's activity when the credential is
  // known), so a known and an unknown credential cost the same writes as well as the same checks.
  const fail = async (log: string, cause?: unknown) => {
    await recordEvent("signin-failed", { userId: passkey?.userId ?? null, ...eventSource(ar), detail: { provider: PASSKEY_PROVIDER_ID } });
    return refused(log, cause);
  };
  // Another account's passkey proves nothing about this one: the same work and refusal as an unknown one.
  if (!passkey || (reauthOf !== null && passkey.userId !== reauthOf)) {
    await verifyAssertion(ar, response, entry, UNKNOWN_CREDENTIAL).catch(() => null);
    throw await fail(passkey ? "passkey of another account" : "unknown credential");
  }
  // A discoverable credential names its account; it must be the passkey's owner.
  if (response.response.userHandle !== undefined && response.response.userHandle !== Buffer.from(userHandle(passkey.userId)).toString("base64url")) {
    throw await fail("user handle of another account");
  }
  let info;
  try {
    info = await verifyAssertion(ar, response, entry, {
      id: passkey.credentialId,
      publicKey: new Uint8Array(Buffer.from(passkey.publicKey, "base64url")),
      counter: Number(passkey.counter),
      transports: passkey.transports ? (passkey.transports.split(",") as WebAuthnCredential["transports"]) : undefined,
    });
  } catch (error) {
    throw await fail("assertion did not verify", (error as AuthError).cause);
  }
  if (!info) throw await fail("assertion did not verify");

  // One step: the challenge is spent and the counter moves on from the value just checked. A
  // replay (same challenge) or a concurrent use of the same counter value writes nothing.
  const now = new Date();
  const used = await db()
    .$transaction(async (tx) => {
      await spendChallenge(tx, entry);
      const { count } = await tx.passkey.updateMany({
        where: { id: passkey.id, counter: passkey.counter },
        data: { counter: BigInt(info.newCounter), lastUsedAt: now, backedUp: info.credentialBackedUp, deviceType: info.credentialDeviceType },
      });
      if (count !== 1) throw new CounterMoved();
    })
    .then(
      () => true,
      // A replay or a race refuses; a database that failed is the flow's Configuration error.
      (error: unknown) => (error instanceof CounterMoved || isRefusedWrite(error) ? false : Promise.reject(error)),
    );
  if (!used) throw await fail("challenge already used or counter moved");
  await forgetExpiredChallenges().catch(() => {});
  return { user: toSessionUser(passkey.user), isNewUser: false, credentialRef: passkeyCredentialRef(passkey.id) };
}

/**
 * POST /auth/reauth with `provider=passkey` (ADR 080): the answer to a `reauthenticate` ceremony, under
 * the same per-client budget of failed answers as a sign-in (ADR 063).
 */
async function reauthenticateWithPasskey(ctx: ReauthContext): Promise<ReauthOutcome> {
  const { ar } = ctx;
  // The entry this answer used leaves the cookie whatever the outcome.
  const response = parseAuthentication(ctx.body.data);
  if (response) ctx.setCookies.push((await takeChallenge(ar, signedChallenge(response.response.clientDataJSON))).setCookie);
  const reservation = await reservePasskeyAnswer(ar.config.rateLimits, clientAddress(ar));
  if (isLimitRefusal(reservation)) {
    await recordEvent("rate-limited", { userId: ctx.user.id, ...eventSource(ar), detail: { bucket: reservation.limit } });
    const message = limitMessage(reservation);
    return { type: "page", status: 429, error: { code: "RateLimited", message }, step: "choose", retryAfterSeconds: reservation.retryAfterSeconds };
  }
  try {
    await checkAnswer(ar, ctx.body.data, ctx.user.id);
  } catch (error) {
    if (!(error instanceof AuthError)) throw error;
    log("warn", "auth-failure", { code: error.code, reason: error.message, cause: error.cause, path: ar.url.pathname });
    return { type: "page", status: 400, error: { code: "WebAuthnVerificationError", message: t("reauth.passkeyRefused"), refused: { kind: "passkey" } }, step: "choose" };
  }
  await reservation.settle(true);
  return { type: "proved", providerType: "webauthn" };
}

/**
 * POST /auth/two-factor with `action=second-step` (ADR 104): the pending sign-in's user gives one of
 * their passkeys, with user verification, as the second factor. The pending sign-in's and the
 * account's budgets of wrong answers (the two-factor page) count a refusal.
 */
async function proveSecondStep(ar: AuthRequest, body: Body, userId: string, setCookies: string[]): Promise<boolean> {
  // The entry this answer used leaves the cookie whatever the outcome.
  const response = parseAuthentication(body.data);
  if (response) setCookies.push((await takeChallenge(ar, signedChallenge(response.response.clientDataJSON))).setCookie);
  try {
    await checkAnswer(ar, body.data, userId, "second-step");
    return true;
  } catch (error) {
    if (!(error instanceof AuthError)) throw error;
    log("warn", "auth-failure", { code: error.code, reason: error.message, cause: error.cause, path: ar.url.pathname });
    return false;
  }
}

/** POST /auth/callback/passkey: which ceremony the browser finished decides the way. */
async function passkeyCallback(ctx: FlowContext): Promise<Response> {
  const action = ctx.body.action;
  if (action === "register") return registerPasskey(ctx, PASSKEY_PROVIDER_ID);
  if (action !== "authenticate") throw refused("unknown action");
  // The entry this answer used leaves the cookie whatever the outcome.
  const response = parseAuthentication(ctx.body.data);
  if (response) ctx.setCookies.push((await takeChallenge(ctx.ar, signedChallenge(response.response.clientDataJSON))).setCookie);
  return runStrategy(ctx, PASSKEY_PROVIDER_ID);
}

function passkeyProviders(config: AuthConfig): Provider[] {
  if (!config.passkeys) return [];
  return [
    {
      id: PASSKEY_PROVIDER_ID,
      name: "Passkey",
      type: "webauthn",
      strategy: new PasskeyStrategy(config) as Provider["strategy"],
      callback: passkeyCallback,
      callbackMethods: ["POST"],
      callbackRequiresCsrf: true,
      webauthnOptions: webauthnOptionsResponse,
      reauthenticate: reauthenticateWithPasskey,
      proveSecondStep,
    },
  ];
}

export const passkeysMethod: SignInMethod = { providers: passkeyProviders };
