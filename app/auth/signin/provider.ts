// What a sign-in method gives the shared flow: its providers, and the work it adds to sign-out and
// to removing an account. Types only, so every method folder may import it; the methods never
// import the registry (registry.server.ts), which is what imports them.
import type { Strategy } from "remix-auth/strategy";
import type { AccountDeletedHook } from "../accounts/deletion.server";
import type { SignInResult } from "../accounts/users.server";
import type { Body } from "../core/body.server";
import type { AuthConfig } from "../core/config.server";
import type { AuthErrorCode } from "../core/errors";
import type { AuthRequest } from "../core/request.server";
import type { CurrentSession } from "../core/session.server";

export type ProviderType = "oauth" | "oidc" | "email" | "credentials" | "webauthn";

export type FlowContext = {
  ar: AuthRequest;
  /** POST body, or the query parameters of a GET. */
  body: Body;
  json: boolean;
  /**
   * The kind of method this sign-in runs: whether it still needs the user's second factor is a
   * property of the kind (two-factor/policy.server.ts: passkeys are exempt), never of an id.
   */
  providerType: ProviderType;
  /** The validated absolute callback URL of this request. */
  callbackUrl: string;
  /** Cookies the flow must send whatever it answers (the callback-url cookie). */
  setCookies: string[];
  /** The request as strategies read it: same URL and headers, the body re-encoded as a form. */
  strategyRequest: Request;
  /**
   * Runs this provider's strategy on `strategyRequest` (through the remix-auth Authenticator the
   * registry owns). Built by the endpoint, so the flow never has to look a provider up.
   */
  authenticate: () => Promise<SignInResult>;
  /**
   * The consecutive-failure ceiling's step (ADR 083): answers a password sign-in for `address` with
   * the e-mailed code, sent only when `send`. Built by the endpoint (the flow imports no method).
   */
  emailStepUp?: (address: string, options: { send: boolean }) => Promise<Response>;
};

export type Provider = {
  id: string;
  name: string;
  type: ProviderType;
  /** Registered on the remix-auth Authenticator under `id`. */
  strategy?: Strategy<SignInResult, never>;
  /** POST /auth/signin/<id>, after the CSRF check. */
  signIn?: (ctx: FlowContext) => Promise<Response>;
  /** GET|POST /auth/callback/<id>. */
  callback?: (ctx: FlowContext) => Promise<Response>;
  callbackMethods: readonly ("GET" | "POST")[];
  /** GET /auth/webauthn-options/<id> (WebAuthn providers): the ceremony's options and its challenge cookie. */
  webauthnOptions?: (ar: AuthRequest, pendingUserId: string | null) => Promise<Response>;
  /**
   * POST /auth/two-factor with `action=second-step` (ADR 104), after the page's CSRF check: the answer
   * (`data`) proves a factor of the pending sign-in's user that is a second factor of every
   * one-factor sign-in (a passkey with user verification). True when it did; false when it did
   * not (recorded by the method). Cookies the answer must carry go to `setCookies`.
   */
  proveSecondStep?: (ar: AuthRequest, body: Body, userId: string, setCookies: string[]) => Promise<boolean>;
  /** Credentials callbacks are form posts from our own page, so they carry the CSRF token. */
  callbackRequiresCsrf: boolean;
  /**
   * POST /auth/reauth with `provider=<id>` (ADR 080), after the page's CSRF check:
   * the signed-in user proves this factor of their own again. Never signs anyone in, links or
   * switches users.
   */
  reauthenticate?: (ctx: ReauthContext) => Promise<ReauthOutcome>;
};

/** A re-authentication: the signed-in session and its user, and the page's request. */
export type ReauthContext = {
  ar: AuthRequest;
  body: Body;
  json: boolean;
  /** The validated absolute URL to go back to. */
  callbackUrl: string;
  session: CurrentSession;
  user: { id: string; email: string | null };
  /** Cookies the answer must carry whatever it is. */
  setCookies: string[];
};

/**
 * What a method answers: the factor was proved (the flow finishes: the second factor, or the
 * renewed session); a protocol hop or an error redirect to pass on; or a refusal the page shows
 * (`step`: the form to show again, e.g. the e-mailed code's).
 */
/**
 * A refusal /auth/reauth names in its query after a redirect back to itself: which words (the
 * table is in reauth-page.server.ts) and, for a wrong code, how many tries are left (counted on the
 * server; the query only picks the words).
 */
export type ReauthRefusalKind = "password" | "passwordNeedsCode" | "passkey" | "codeRequired" | "codeWrong" | "codeEnded" | "notLinked" | "chooseFactor";
export type ReauthRefusal = { kind: ReauthRefusalKind; triesLeft?: number };

export type ReauthOutcome =
  | { type: "proved"; providerType: ProviderType }
  | { type: "response"; response: Response }
  | {
      type: "page";
      status: number;
      /**
       * The refusal: its Auth.js-style code (a JSON client's `?error=`), the text the page shows and,
       * when a browser is sent back to the page (Post/Redirect/Get), which words that page shows.
       */
      error: { code: AuthErrorCode; message: string; refused?: ReauthRefusal } | null;
      step: "choose" | "code";
      setCookies?: string[];
      retryAfterSeconds?: number;
    };

/**
 * Runs after the session has ended. A hook may return a URL to send the browser on to instead of
 * the callback URL (federated sign-out at an OpenID provider); the first such URL, in list order,
 * wins. `deadline` fires when sign-out stops waiting: calls still running then should stop.
 */
export type SignOutHook = (ar: AuthRequest, userId: string, callbackUrl: string, deadline: AbortSignal) => Promise<void | string>;

/**
 * Runs before the user's account at `provider` is removed, once the removal rule allowed it
 * (revoking the tokens held for it). A failure stops the removal.
 */
export type BeforeUnlinkHook = (config: AuthConfig, userId: string, provider: string) => Promise<void>;

/** One way to sign in, as the registry collects it. */
export type SignInMethod = {
  providers: (config: AuthConfig) => Provider[];
  signOutHooks?: readonly SignOutHook[];
  beforeUnlink?: BeforeUnlinkHook;
  /** After a user was deleted (accounts/deletion.server.ts): revoke what the method held for them elsewhere. */
  afterAccountDeleted?: AccountDeletedHook;
  /**
   * Origins outside the app that a form of ours is redirected to (a provider's authorization
   * endpoint): the pages' CSP form-action lists them. Called for every page: must not wait.
   */
  formActionOrigins?: (config: AuthConfig) => string[];
};
