// The browser side of passkeys, in Auth.js's protocol: fetch the options from
// /auth/webauthn-options/passkey, let the browser (and the person's authenticator) answer, and
// send the answer to /auth/callback/passkey as a document form POST (csrfToken, action, data,
// callbackUrl), so the server's redirect and cookies work as for every other sign-in form.
// Runs only in the browser, from event handlers and effects; @simplewebauthn/browser is loaded
// on first use, as a script of our own origin (the pages' CSP allows 'self').
const BASE = "/auth";
const PROVIDER = "passkey";

type Action = "authenticate" | "register" | "reauthenticate" | "second-step";

/** The server refused the options; `reason` is its own text for the person (e.g. sign in again with a code). */
export class OptionsRefused extends Error {
  constructor(
    status: number,
    readonly reason: string | null,
  ) {
    super(`options refused (${status})`);
  }
}

async function fetchOptions(action: Action, signal?: AbortSignal) {
  const res = await fetch(`${BASE}/webauthn-options/${PROVIDER}?action=${action}`, { credentials: "same-origin", headers: { Accept: "application/json" }, signal });
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: unknown } | null;
    throw new OptionsRefused(res.status, typeof body?.error === "string" ? body.error : null);
  }
  const body = (await res.json()) as { action: Action; options: any };
  if (body.action !== action) throw new Error("unexpected options");
  return body.options;
}

function submit(action: Action, data: unknown, csrfToken: string, callbackUrl: string, target = `${BASE}/callback/${PROVIDER}`, extra: Record<string, string> = {}) {
  const form = document.createElement("form");
  form.method = "post";
  form.action = target;
  form.hidden = true;
  for (const [name, value] of Object.entries({ csrfToken, action, data: JSON.stringify(data), callbackUrl, ...extra })) {
    const input = document.createElement("input");
    input.type = "hidden";
    input.name = name;
    input.value = value;
    form.append(input);
  }
  document.body.append(form);
  form.submit();
}

export async function passkeysSupported(): Promise<{ webauthn: boolean; autofill: boolean }> {
  const browser = await import("@simplewebauthn/browser");
  if (!browser.browserSupportsWebAuthn()) return { webauthn: false, autofill: false };
  return { webauthn: true, autofill: await browser.browserSupportsWebAuthnAutofill() };
}

/** Adds a passkey to the signed-in user, then lands on `callbackUrl`. */
export async function registerPasskey(csrfToken: string, callbackUrl: string): Promise<void> {
  const { startRegistration } = await import("@simplewebauthn/browser");
  const optionsJSON = await fetchOptions("register");
  const answer = await startRegistration({ optionsJSON });
  submit("register", answer, csrfToken, callbackUrl);
}

/**
 * Signs in with a passkey. `autofill`: wait for the person to pick a passkey from the browser's
 * autofill on an input with autocomplete="… webauthn" (conditional mediation); a later call
 * (the button) cancels that wait once it has begun. Before it has begun (its options still on
 * the way) only `signal` can stop it: a ceremony started late would cancel the button's.
 */
export async function signInWithPasskey(csrfToken: string, callbackUrl: string, { autofill = false, signal }: { autofill?: boolean; signal?: AbortSignal } = {}): Promise<void> {
  const { startAuthentication } = await import("@simplewebauthn/browser");
  signal?.throwIfAborted();
  const optionsJSON = await fetchOptions("authenticate", signal);
  signal?.throwIfAborted();
  const answer = await startAuthentication({ optionsJSON, useBrowserAutofill: autofill });
  submit("authenticate", answer, csrfToken, callbackUrl);
}

/**
 * Proves the signed-in user again with one of their own passkeys (the options allow only theirs)
 * and posts the answer to the re-authentication page `action`, which goes on to `callbackUrl`.
 */
export async function reauthenticateWithPasskey(csrfToken: string, callbackUrl: string, action: string, providerId: string): Promise<void> {
  const { startAuthentication } = await import("@simplewebauthn/browser");
  const optionsJSON = await fetchOptions("reauthenticate");
  const answer = await startAuthentication({ optionsJSON });
  submit("reauthenticate", answer, csrfToken, callbackUrl, action, { provider: providerId });
}

/**
 * Gives the pending sign-in's second factor with one of its user's passkeys (the options allow
 * only theirs) and posts the answer to the second-factor page (ADR 104).
 */
export async function secondStepWithPasskey(csrfToken: string): Promise<void> {
  const { startAuthentication } = await import("@simplewebauthn/browser");
  const optionsJSON = await fetchOptions("second-step");
  const answer = await startAuthentication({ optionsJSON });
  // The pending sign-in knows where it goes: no callbackUrl of its own.
  submit("second-step", answer, csrfToken, "", `${BASE}/two-factor`);
}

/** A cancelled or superseded ceremony is not an error worth showing. */
export function isCancelled(error: unknown): boolean {
  const name = (error as { name?: string; code?: string })?.name;
  const code = (error as { code?: string })?.code;
  return name === "AbortError" || code === "ERROR_CEREMONY_ABORTED";
}
