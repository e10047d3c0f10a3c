// The OpenID Connect connections section of /orgs/<slug> (docs/features/oidc-connections.md,
// ADR 151): what the page shows an admin, and its two intents (`oidc-add`, `oidc-remove`). Kept
// apart from orgs.server.ts, which calls it after its membership and recent-sign-in checks.
import { z } from "zod";
import { ID_PATTERN } from "~/auth/core/ids";
import { addOidcConnectionAs, listOidcConnections, removeOidcConnectionAs } from "~/auth/oidc-connections";
import { listDomains } from "~/auth/organizations/domains.server";
import type { MemberContext } from "~/auth/organizations/organizations.server";
import { t } from "~/i18n/t.server";

/** The section's data: the connections (with the redirect URI each needs) and the domains a new one may serve. */
export async function oidcConnectionsSection(organizationId: string, origin: string) {
  const [connections, domains] = await Promise.all([listOidcConnections(organizationId, origin), listDomains(organizationId)]);
  return { connections, verifiedDomains: domains.filter((d) => d.state === "verified").map((d) => d.domain) };
}

export const OIDC_INTENTS = ["oidc-add", "oidc-remove"] as const;

const OidcIntent = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("oidc-add"),
    issuer: z.string(),
    clientId: z.string(),
    clientSecret: z.string(),
    // A JSON client: a list, or one string of names; a form: one `domain:<name>` checkbox per verified domain.
    domains: z.union([z.string(), z.array(z.string())]).optional(),
    defaultRole: z.string().optional(),
  }),
  z.object({ intent: z.literal("oidc-remove"), connectionId: z.string().regex(ID_PATTERN) }),
]);

type Refusal = { status: number; code: string; message: string };
export type OidcIntentOutcome = { ok: true; done: "oidc-added" | "oidc-removed"; json: Record<string, unknown> } | { ok: false; refusal: Refusal };

const REFUSALS = {
  forbidden: () => ({ status: 403, code: "Forbidden", message: t("org.error.forbidden") }),
  "not-found": () => ({ status: 404, code: "NotFound", message: t("org.error.notFound") }),
  invalid: () => ({ status: 400, code: "InvalidInput", message: t("org.error.oidcInvalid") }),
  domains: () => ({ status: 400, code: "InvalidInput", message: t("org.error.oidcInvalid") }),
  discovery: () => ({ status: 400, code: "DiscoveryFailed", message: t("org.error.oidcDiscovery") }),
  address: () => ({ status: 400, code: "IssuerNotPublic", message: t("org.error.oidcIssuerAddress") }),
} as const;

function domainsOf(body: Record<string, unknown>, listed: string | string[] | undefined): string[] {
  const named = typeof listed === "string" ? listed.split(/[\s,]+/) : (listed ?? []);
  const ticked = Object.entries(body)
    .filter(([key, value]) => key.startsWith("domain:") && (value === "on" || value === "true" || value === true))
    .map(([key]) => key.slice("domain:".length));
  return [...named, ...ticked].map((d) => d.trim()).filter(Boolean);
}

/** One of the section's intents, for an admin of `ctx` whose sign-in is recent (checked by the caller). */
export async function oidcConnectionIntent(ctx: MemberContext, body: Record<string, unknown>): Promise<OidcIntentOutcome> {
  const parsed = OidcIntent.safeParse(body);
  if (!parsed.success) return { ok: false, refusal: REFUSALS.invalid() };
  const input = parsed.data;
  if (input.intent === "oidc-remove") {
    const removed = await removeOidcConnectionAs(ctx, input.connectionId);
    return removed.ok ? { ok: true, done: "oidc-removed", json: {} } : { ok: false, refusal: REFUSALS[removed.reason]() };
  }
  const added = await addOidcConnectionAs(ctx, {
    issuer: input.issuer,
    clientId: input.clientId,
    clientSecret: input.clientSecret,
    domains: domainsOf(body, input.domains),
    defaultRole: input.defaultRole ?? "member",
  });
  return added.ok ? { ok: true, done: "oidc-added", json: { connection: { id: added.id } } } : { ok: false, refusal: REFUSALS[added.reason]() };
}
