// The OAuth check cookies: `authjs.state`, `authjs.pkce.code_verifier` and
// `authjs.nonce`, each an Auth.js-style JWE (salt = the cookie's own name, 900 s) bound to the
// provider id that set it, used once, and cleared on every outcome of the callback.
//
// Several tabs may sign in at once. Auth.js keeps one value per cookie, so the second tab's
// sign-in overwrites the first tab's check values and the first tab's callback fails. Here each
// cookie keeps a short list of pending flows instead (docs/decisions/011-oauth-check-cookies.md):
// the newest flow sits at the top level in Auth.js's `{value, provider}` shape, older live flows
// in `earlier`. The callback finds its flow by the `state` the provider echoes, removes that flow
// from all three cookies and rewrites (or expires) them, so other tabs' flows survive.
import { CHECK_COOKIE_MAX_AGE } from "../core/config.server";
import { expireCookie, MAX_COOKIE_SIZE, serializeCookie } from "../core/cookies.server";
import { constantTimeEqual, randomToken } from "../core/crypto.server";
import { encodeJwt } from "../core/jwt.server";
import { openSealedCookie } from "../core/sealed-cookies.server";
import type { AuthRequest } from "../core/request.server";

/** Pending sign-ins kept per browser; a sixth evicts the oldest (so do long callback URLs, see writeEntries). */
export const MAX_PENDING_FLOWS = 5;

export type CheckKind = "state" | "pkceCodeVerifier" | "nonce";
const KINDS: readonly CheckKind[] = ["state", "pkceCodeVerifier", "nonce"];

/**
 * `formPost`: the flow asked for response_mode=form_post, so its cookie must be SameSite=None.
 * `callbackUrl` (state entries only): where this flow's visitor goes afterwards. Kept per flow, so
 * two tabs keep their own, and it survives a form_post return, which does not carry the
 * SameSite=Lax callback-url cookie.
 */
type Entry = {
  flow: string;
  value: string;
  provider: string;
  expiresAt: number;
  formPost?: boolean;
  callbackUrl?: string;
  maxAge?: number;
  reauth?: ReauthFlow;
  /** The browser that started the flow carried a session cookie (form-post-return.server.ts). */
  signedIn?: boolean;
  /**
   * The user signed in when the flow started, kept only by flows that need it: an organization's
   * OpenID Connect connection links an existing account only for its owner who started the
   * sign-in (ADR 164).
   */
  startedBy?: string;
};

/**
 * A re-authentication at the provider (ADR 080), kept in the state entry: the signed-in user and
 * session that asked, and when (seconds): the answer must be an account of that user, proved
 * after that moment.
 */
export type ReauthFlow = { userId: string; subject: string; at: number };

function isReauthFlow(v: unknown): v is ReauthFlow {
  const r = v as Record<string, unknown> | null;
  return typeof r === "object" && r !== null && typeof r.userId === "string" && typeof r.subject === "string" && typeof r.at === "number";
}

/** What one sign-in put in the cookies. `nonce` is null for plain OAuth 2.0 providers. */
export type Flow = {
  flow: string;
  provider: string;
  state: string;
  codeVerifier: string | null;
  nonce: string | null;
  callbackUrl: string | null;
  /** The max_age (seconds) the authorization request carried: the ID token's auth_time must honour it. */
  maxAge: number | null;
  /** Set when the flow re-authenticates a signed-in user (/auth/reauth) instead of signing in. */
  reauth: ReauthFlow | null;
  /** The browser that started it carried a session cookie. */
  signedIn: boolean;
  /** The signed-in user who started it, when the flow kept one (Entry.startedBy). */
  startedBy: string | null;
};

type Sealed = Entry & { earlier?: Entry[] };

const now = () => Math.floor(Date.now() / 1000);

function isEntry(v: unknown): v is Entry {
  if (typeof v !== "object" || v === null) return false;
  const e = v as Record<string, unknown>;
  return typeof e.flow === "string" && typeof e.value === "string" && typeof e.provider === "string" && typeof e.expiresAt === "number";
}

/** The live entries of one check cookie, newest first; a cookie that does not decrypt reads as empty. */
async function readEntries(ar: AuthRequest, kind: CheckKind): Promise<Entry[]> {
  const name = ar.names[kind];
  const raw = ar.cookies.get(name);
  if (!raw) return [];
  // Not re-sealed here (ADR 109): these cookies live as long as their flows (minutes), every flow
  // added or taken out rewrites them with the first secret and the SameSite their flows need, and a
  // stale one still opens until the old value is dropped. A refusal is counted and logged.
  const opened = await openSealedCookie({ kind: "oauth-check", name, raw, secrets: ar.config.secrets, secure: ar.secure, clockTolerance: 0, reseal: false });
  if (!opened) return [];
  const { payload } = opened;
  const top = {
    flow: payload.flow,
    value: payload.value,
    provider: payload.provider,
    expiresAt: payload.expiresAt,
    formPost: payload.formPost === true,
    ...(typeof payload.callbackUrl === "string" ? { callbackUrl: payload.callbackUrl } : {}),
    ...(typeof payload.maxAge === "number" ? { maxAge: payload.maxAge } : {}),
    ...(isReauthFlow(payload.reauth) ? { reauth: payload.reauth } : {}),
    ...(payload.signedIn === true ? { signedIn: true } : {}),
    ...(typeof payload.startedBy === "string" ? { startedBy: payload.startedBy } : {}),
  };
  const earlier = Array.isArray(payload.earlier) ? payload.earlier : [];
  const t = now();
  return [top, ...earlier].filter(isEntry).filter((e) => e.expiresAt > t);
}

/**
 * Seals `entries` (newest first) into one Set-Cookie. A check cookie is never chunked: when the
 * list would make it larger than a browser keeps (MAX_COOKIE_SIZE, name and attributes
 * included), the oldest flows give way (docs/decisions/011-oauth-check-cookies.md). Returns the
 * header and the entries it holds.
 */
/** `at`: the moment the entries were made (one clock reading per write: a fresh flow's cookie says Max-Age=900 however long the write takes). */
async function writeEntries(ar: AuthRequest, kind: CheckKind, entries: Entry[], at = now()): Promise<{ setCookie: string; kept: Entry[] }> {
  const name = ar.names[kind];
  if (entries.length === 0) return { setCookie: expireCookie(name, ar.secure), kept: [] };
  for (let kept = entries; kept.length > 0; kept = kept.slice(0, -1)) {
    const setCookie = await sealEntries(ar, name, kept, at);
    if (Buffer.byteLength(setCookie) <= MAX_COOKIE_SIZE) return { setCookie, kept };
  }
  // Even the newest flow alone is too large: only its callback URL can be (a valid URL grows
  // when percent-encoded). It then lands where the shared callback-url cookie says, as in Auth.js.
  const { callbackUrl: _dropped, ...newest } = entries[0]!;
  const setCookie = await sealEntries(ar, name, [newest], at);
  if (Buffer.byteLength(setCookie) > MAX_COOKIE_SIZE) throw new Error(`the ${name} cookie cannot hold one flow`);
  return { setCookie, kept: [newest] };
}

async function sealEntries(ar: AuthRequest, name: string, entries: Entry[], at: number): Promise<string> {
  const [newest, ...earlier] = entries;
  const maxAge = Math.max(1, Math.max(...entries.map((e) => e.expiresAt)) - at);
  const payload: Sealed = { ...newest! };
  if (earlier.length) payload.earlier = earlier;
  const token = await encodeJwt({ payload, secrets: ar.config.secrets, salt: name, maxAge });
  // A provider answering with response_mode=form_post comes back as a cross-site POST, which
  // only carries SameSite=None cookies (and browsers accept those only when Secure).
  return serializeCookie(name, token, {
    secure: ar.secure,
    maxAge,
    expires: new Date((at + maxAge) * 1000),
    sameSite: entries.some((e) => e.formPost) ? "None" : "Lax",
  });
}

/**
 * Starts a flow: adds its values to the cookies and returns the Set-Cookie headers.
 * `nonce`/`codeVerifier` null: that check is not used by this provider.
 */
export async function storeFlow(
  ar: AuthRequest,
  values: {
    provider: string;
    state: string;
    codeVerifier: string | null;
    nonce: string | null;
    callbackUrl: string;
    maxAge: number | null;
    reauth?: ReauthFlow | null;
    signedIn?: boolean;
    startedBy?: string | null;
  },
  options: { formPost: boolean },
): Promise<string[]> {
  const flow = randomToken(12);
  const at = now();
  const expiresAt = at + CHECK_COOKIE_MAX_AGE;
  const byKind: Record<CheckKind, string | null> = {
    state: values.state,
    pkceCodeVerifier: values.codeVerifier,
    nonce: values.nonce,
  };
  const out: string[] = [];
  // The state cookie is written first and is the one that can fill up (callback URLs): the flows
  // it keeps are the flows the other two keep, so no cookie carries half of an evicted flow.
  let live: Set<string> | null = null;
  for (const kind of KINDS) {
    const current = (await readEntries(ar, kind)).filter((e) => live === null || live.has(e.flow));
    const value = byKind[kind];
    // A kind this provider does not use still has other flows' entries to keep.
    if (value === null && current.length === 0) continue;
    const entry: Entry = {
      flow,
      value: value ?? "",
      provider: values.provider,
      expiresAt,
      ...(options.formPost ? { formPost: true } : {}),
      ...(kind === "state" ? { callbackUrl: values.callbackUrl } : {}),
      ...(kind === "state" && values.maxAge !== null ? { maxAge: values.maxAge } : {}),
      ...(kind === "state" && values.reauth ? { reauth: values.reauth } : {}),
      ...(kind === "state" && values.signedIn ? { signedIn: true } : {}),
      ...(kind === "state" && values.startedBy ? { startedBy: values.startedBy } : {}),
    };
    const next = value === null ? current : [entry, ...current];
    const { setCookie, kept } = await writeEntries(ar, kind, next.slice(0, MAX_PENDING_FLOWS), at);
    out.push(setCookie);
    live ??= new Set(kept.map((e) => e.flow));
  }
  return out;
}

export type CheckFailure =
  | "missing-state-param"
  | "missing-state-cookie"
  | "state-mismatch"
  | "state-from-other-provider"
  | "missing-pkce-cookie"
  | "missing-nonce-cookie";

export type ConsumedFlow = {
  /** The flow this callback belongs to, or why there is none. */
  result: { ok: true; flow: Flow } | { ok: false; reason: CheckFailure };
  /** The rewritten or expired check cookies: sent on every outcome of the callback. */
  setCookies: string[];
};

/**
 * Finds the flow a callback belongs to by the `state` the provider sent back, and removes it from
 * the cookies (single use). When no flow of this provider matches — a forged or stale callback —
 * every pending flow of this provider is dropped, and a matching flow set by another provider
 * is dropped too, so nothing a failed callback touched can be replayed. Flows of other providers
 * (other tabs) are kept. Pure with respect to the request: calling it twice gives the same answer.
 */
export async function consumeFlow(ar: AuthRequest, provider: string, state: string | null, needsNonce: boolean): Promise<ConsumedFlow> {
  const entries = {} as Record<CheckKind, Entry[]>;
  for (const kind of KINDS) entries[kind] = await readEntries(ar, kind);

  let result: ConsumedFlow["result"];
  let drop: (e: Entry) => boolean;
  const match = state ? entries.state.find((e) => constantTimeEqual(e.value, state)) : undefined;
  if (!state) {
    result = { ok: false, reason: "missing-state-param" };
    drop = (e) => e.provider === provider;
  } else if (!match) {
    result = { ok: false, reason: entries.state.length ? "state-mismatch" : "missing-state-cookie" };
    drop = (e) => e.provider === provider;
  } else if (match.provider !== provider) {
    result = { ok: false, reason: "state-from-other-provider" };
    drop = (e) => e.provider === provider || e.flow === match.flow;
  } else {
    drop = (e) => e.flow === match.flow;
    const verifier = entries.pkceCodeVerifier.find((e) => e.flow === match.flow && e.provider === provider);
    const nonce = entries.nonce.find((e) => e.flow === match.flow && e.provider === provider);
    if (!verifier) result = { ok: false, reason: "missing-pkce-cookie" };
    else if (needsNonce && !nonce) result = { ok: false, reason: "missing-nonce-cookie" };
    else {
      result = {
        ok: true,
        flow: {
          flow: match.flow,
          provider,
          state: match.value,
          codeVerifier: verifier.value,
          nonce: nonce?.value ?? null,
          callbackUrl: match.callbackUrl ?? null,
          maxAge: match.maxAge ?? null,
          reauth: isReauthFlow(match.reauth) ? match.reauth : null,
          signedIn: match.signedIn === true,
          startedBy: typeof match.startedBy === "string" ? match.startedBy : null,
        },
      };
    }
  }

  const setCookies: string[] = [];
  for (const kind of KINDS) {
    const name = ar.names[kind];
    const kept = entries[kind].filter((e) => !drop(e));
    if (kept.length === entries[kind].length && !ar.cookies.has(name)) continue;
    if (kept.length === 0) setCookies.push(expireCookie(name, ar.secure));
    else if (kept.length !== entries[kind].length) setCookies.push((await writeEntries(ar, kind, kept)).setCookie);
  }
  return { result, setCookies };
}
