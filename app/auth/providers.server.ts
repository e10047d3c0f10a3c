// The provider registry: which sign-in methods are on, and the handlers behind
// POST /auth/signin/<id> and GET|POST /auth/callback/<id>. Each method contributes its providers
// from its own module; this file only puts them together in display order.
import type { Strategy } from "remix-auth/strategy";
import type { AuthConfig } from "./core/config.server";
import type { Body } from "./core/body.server";
import type { AuthRequest } from "./core/request.server";
import type { SignInResult } from "./users.server";
import { credentialsProviders } from "./strategies/credentials.server";
import { oauthProviders } from "./providers/index.server";
import { emailProviders } from "./strategies/email.server";

export type ProviderType = "oauth" | "oidc" | "email" | "credentials";

export type FlowContext = {
  ar: AuthRequest;
  /** POST body, or the query parameters of a GET. */
  body: Body;
  json: boolean;
  /** The validated absolute callback URL of this request. */
  callbackUrl: string;
  /** Cookies the flow must send whatever it answers (the callback-url cookie). */
  setCookies: string[];
  /** The request as strategies read it: same URL and headers, the body re-encoded as a form. */
  strategyRequest: Request;
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
  /** Credentials callbacks are form posts from our own page, so they carry the CSRF token. */
  callbackRequiresCsrf: boolean;
};

type ProviderSource = (config: AuthConfig) => Provider[];

const SOURCES: ProviderSource[] = [oauthProviders, emailProviders, credentialsProviders];

const cache = new WeakMap<AuthConfig, Provider[]>();

export function getProviders(config: AuthConfig): Provider[] {
  let list = cache.get(config);
  if (!list) {
    list = SOURCES.flatMap((source) => source(config));
    cache.set(config, list);
  }
  return list;
}

export function findProvider(config: AuthConfig, id: string): Provider | undefined {
  return getProviders(config).find((p) => p.id === id);
}
