// oidc-provider ships no type declarations (and @types/oidc-provider is not a dependency): the
// part of its API the dev IdP (app/dev/idp.server.ts) and Vestibule's own provider
// (app/auth/provider/) use, typed loosely where the library's own shapes are large.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export type AdapterPayload = Record<string, unknown> & {
    grantId?: string;
    uid?: string;
    userCode?: string;
    accountId?: string;
    clientId?: string;
    consumed?: number;
    jti?: string;
    kind?: string;
  };
  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export type OidcClient = {
    clientId: string;
    clientName?: string;
    applicationType?: string;
    redirectUris?: string[];
    subjectType?: string;
    sectorIdentifier?: string;
    backchannelLogoutUri?: string;
    grantTypeAllowed(type: string): boolean;
    metadata(): Record<string, unknown>;
  };

  export type KoaContextWithOIDC = {
    body: unknown;
    type: string;
    status: number;
    method: string;
    path: string;
    url: string;
    query: Record<string, string | string[] | undefined>;
    state: Record<string, unknown>;
    req: IncomingMessage;
    get(header: string): string;
    set(header: string, value: string): void;
    append(header: string, value: string): void;
    redirect(url: string): void;
    cookies: { set(name: string, value: string | null, options?: Record<string, unknown>): void };
    oidc: {
      provider: Provider;
      route?: string;
      params: Record<string, unknown>;
      client?: OidcClient;
      session?: {
        accountId?: string;
        loginTs?: number;
        state?: Record<string, unknown>;
        authorizations?: Record<string, { sid?: string; grantId?: string; persistsLogout?: boolean }>;
        grantIdFor(clientId: string): string | undefined;
        sidFor(clientId: string): string | undefined;
        destroy(): Promise<void>;
      };
      urlFor(route: string): string;
      result?: { consent?: { grantId?: string } };
      /** The device code a /device request is about (RFC 8628), else undefined. */
      deviceCode?: { jti: string };
      requestParamScopes: Set<string>;
      entities: Record<string, unknown>;
    };
  };

  export type Configuration = Record<string, unknown> & {
    findAccount?: (ctx: KoaContextWithOIDC, sub: string, token?: unknown) => Promise<{ accountId: string; claims: (use: string, scope: string) => Promise<Record<string, unknown>> } | undefined>;
    loadExistingGrant?: (ctx: KoaContextWithOIDC) => Promise<unknown>;
    issueRefreshToken?: (ctx: KoaContextWithOIDC, client: OidcClient, code: { scopes: Set<string> }) => Promise<boolean>;
    rotateRefreshToken?: (ctx: KoaContextWithOIDC) => boolean;
    renderError?: (ctx: KoaContextWithOIDC, out: Record<string, unknown>, error: Error) => Promise<void>;
    interactions?: { url: (ctx: KoaContextWithOIDC, interaction: { uid: string }) => string | Promise<string>; policy?: unknown };
    features?: Record<string, Record<string, unknown> & {
      logoutSource?: (ctx: KoaContextWithOIDC, form: string) => Promise<void>;
      postLogoutSuccessSource?: (ctx: KoaContextWithOIDC) => Promise<void>;
    }>;
  };

  export type Grant = {
    jti: string;
    accountId: string;
    clientId: string;
    openid?: { scope?: string };
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    getOIDCScope(): string;
    save(): Promise<string>;
  };

  export type Interaction = {
    uid: string;
    jti: string;
    exp: number;
    iat?: number;
    returnTo: string;
    params: Record<string, unknown>;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    session?: { accountId?: string; uid?: string };
    grantId?: string;
    /** Set when the interaction approves a device (RFC 8628): the device code it is for. */
    deviceCode?: string;
    result?: Record<string, unknown>;
    lastSubmission?: Record<string, unknown>;
    save(ttl: number): Promise<string>;
  };

  export class Check {
    constructor(reason: string, description: string, error: string, check: (ctx: KoaContextWithOIDC) => unknown);
    static REQUEST_PROMPT: boolean;
    static NO_NEED_TO_PROMPT: boolean;
  }
  type Prompt = { name: string; checks: { add(check: Check, index?: number): void } };
  export const interactionPolicy: {
    Check: typeof Check;
    base(): { get(name: string): Prompt | undefined } & Prompt[];
  };

  export const errors: Record<string, new (description?: string, detail?: string) => Error>;

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    proxy: boolean;
    static readonly ctx: KoaContextWithOIDC | undefined;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): this;
    /** Koa's EventEmitter: `grant.success` fires once per successful token endpoint call. */
    on(event: string, listener: (ctx: KoaContextWithOIDC, ...rest: unknown[]) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionResult(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<string>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
    cookieName(type: string): string;
    Client: { find(id: string): Promise<OidcClient | undefined>; prototype: object };
    IdToken: { validate(jwt: string, client: OidcClient): Promise<unknown> };
    Interaction: { find(id: string): Promise<Interaction | undefined> };
    Session: { findByUid(uid: string): Promise<{ accountId?: string } | undefined> };
    Grant: {
      new (init: { clientId: string; accountId: string }): Grant;
      find(id: string): Promise<Grant | undefined>;
    };
  }
}
