// oidc-provider ships no type declarations (and @types/oidc-provider is not a dependency): the
// part of its API the dev IdP uses, typed loosely where the library's own shapes are large.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export type KoaContextWithOIDC = {
    body: unknown;
    type: string;
    oidc: {
      provider: Provider;
      client?: { clientId: string; clientName?: string; grantTypeAllowed(type: string): boolean };
      session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      result?: { consent?: { grantId?: string } };
      requestParamScopes: Set<string>;
    };
  };

  export type Configuration = Record<string, unknown> & {
    findAccount?: (ctx: KoaContextWithOIDC, sub: string) => Promise<{ accountId: string; claims: () => Promise<Record<string, unknown>> } | undefined>;
    loadExistingGrant?: (ctx: KoaContextWithOIDC) => Promise<unknown>;
    issueRefreshToken?: (ctx: KoaContextWithOIDC, client: { grantTypeAllowed(type: string): boolean }) => Promise<boolean>;
    rotateRefreshToken?: (ctx: KoaContextWithOIDC) => boolean;
    renderError?: (ctx: KoaContextWithOIDC, out: Record<string, unknown>, error: Error) => Promise<void>;
    interactions?: { url: (ctx: KoaContextWithOIDC, interaction: { uid: string }) => string };
    features?: Record<string, Record<string, unknown> & {
      logoutSource?: (ctx: KoaContextWithOIDC, form: string) => Promise<void>;
      postLogoutSuccessSource?: (ctx: KoaContextWithOIDC) => Promise<void>;
    }>;
  };

  export type Grant = { addOIDCScope(scope: string): void; save(): Promise<string> };

  export type Interaction = { uid: string; params: Record<string, unknown>; prompt: { name: string } };

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    /** Koa's EventEmitter: `grant.success` fires once per successful token endpoint call. */
    on(event: "grant.success", listener: (ctx: { oidc: { params: Record<string, unknown> } }) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
    Client: { find(id: string): Promise<{ clientId: string; clientName?: string } | undefined> };
    Grant: {
      new (init: { clientId: string; accountId: string }): Grant;
      find(id: string): Promise<Grant | undefined>;
    };
  }
}
