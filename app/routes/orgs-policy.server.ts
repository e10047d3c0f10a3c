// The Policy section of /orgs/<slug> (docs/features/organizations.md#policy, ADR 165, 166): its
// data and its one intent, `policy`. Kept apart from orgs.server.ts, which answers with it (the
// recent sign-in, the CSRF token and the membership are checked there first).
import { z } from "zod";
import type { AuthRequest } from "~/auth/core";
import type { MemberContext } from "~/auth/organizations/organizations.server";
import { BREAK_GLASS_MAX, deploymentLimits, policySection, updatePolicy, type PolicyRefusal } from "~/auth/organizations/policy.server";
import { atLeast } from "~/auth/organizations/roles";
import { t } from "~/i18n/t.server";
import { describeLifetime } from "~/mail/templates.server";

/** The section's data for an admin or owner; null for a member (who sees no policy). */
export async function policyData(ctx: Pick<MemberContext, "organization" | "membership">) {
  if (!atLeast(ctx.membership.role, "admin")) return null;
  const section = await policySection(ctx.organization.id);
  // The service's limits in words ("30 days"), not a count of minutes nobody reads at a glance.
  const limitsText = { idle: describeLifetime(section.limits.idle * 60), absolute: section.limits.absolute === null ? null : describeLifetime(section.limits.absolute * 60) };
  return { ...section, limitsText, breakGlassMax: BREAK_GLASS_MAX, breakGlassField: BREAK_GLASS_FIELD };
}

const PolicyFields = z.object({
  requireSso: z.string().optional(),
  requireMfa: z.string().optional(),
  // JSON: an array of user ids, or them space-separated. A form ticks one `breakGlass:<userId>` box per owner (a body keeps one value per name).
  breakGlassOwners: z.union([z.string(), z.array(z.string())]).optional(),
  sessionIdleMinutes: z.union([z.string(), z.number()]).optional(),
  sessionAbsoluteMinutes: z.union([z.string(), z.number()]).optional(),
});

/** The form's box for one owner: `breakGlass:<userId>`. */
export const BREAK_GLASS_FIELD = "breakGlass:";

const on = (value: string | undefined) => value === "on" || value === "true";

/** One refusal per bad input: its status, JSON code and sentence. */
function refusalOf(reason: PolicyRefusal | "bad-request"): { status: number; code: string; message: string } {
  const limits = deploymentLimits();
  switch (reason) {
    case "forbidden":
      return { status: 403, code: "Forbidden", message: t("org.error.forbidden") };
    case "idle-limit":
      return { status: 400, code: "InvalidIdleLimit", message: t("org.error.policyLimit", { max: limits.idle }) };
    case "absolute-limit":
      return { status: 400, code: "InvalidAbsoluteLimit", message: t("org.error.policyLimit", { max: limits.absolute }) };
    case "break-glass-owner":
      return { status: 400, code: "BreakGlassNotOwner", message: t("org.error.breakGlassOwner") };
    case "break-glass-count":
      return { status: 400, code: "TooManyBreakGlassOwners", message: t("org.error.breakGlassCount") };
    case "sso-without-connection":
      return { status: 409, code: "SsoWithoutConnection", message: t("org.error.ssoWithoutConnection") };
    case "invalid":
    case "bad-request":
      return { status: 400, code: "InvalidInput", message: t("org.error.invalid") };
  }
}

export type PolicyOutcome = { ok: true; json: Record<string, unknown> } | { ok: false; refusal: { status: number; code: string; message: string } };

/** POST intent=policy: every field of the form at once (an unticked box is off, an empty limit none). */
export async function policyIntent(ar: AuthRequest, ctx: MemberContext, body: Record<string, unknown>): Promise<PolicyOutcome> {
  const parsed = PolicyFields.safeParse(body);
  if (!parsed.success) return { ok: false, refusal: refusalOf("bad-request") };
  const input = parsed.data;
  const listed = input.breakGlassOwners === undefined ? [] : Array.isArray(input.breakGlassOwners) ? input.breakGlassOwners : input.breakGlassOwners.split(/\s+/);
  const ticked = Object.keys(body).filter((k) => k.startsWith(BREAK_GLASS_FIELD) && on(String(body[k]))).map((k) => k.slice(BREAK_GLASS_FIELD.length));
  const owners = [...listed, ...ticked].filter(Boolean);
  const result = await updatePolicy(ar, ctx, {
    requireSso: on(input.requireSso),
    requireMfa: on(input.requireMfa),
    breakGlassOwners: owners,
    sessionIdleMinutes: String(input.sessionIdleMinutes ?? ""),
    sessionAbsoluteMinutes: String(input.sessionAbsoluteMinutes ?? ""),
  });
  if (!result.ok) return { ok: false, refusal: refusalOf(result.reason) };
  return { ok: true, json: { sessionsEnded: result.endedSessions } };
}
