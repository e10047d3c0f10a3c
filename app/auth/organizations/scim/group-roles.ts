// Directory groups map to membership roles (docs/features/scim.md, ADR 157): the one rule.

/** A group's role from its name: "admin", "admins", "administrators" (any case) give admin; every other group, member. */
export function roleOfGroupName(displayName: string): "admin" | "member" {
  return /^(admin|admins|administrators?)$/i.test(displayName.trim()) ? "admin" : "member";
}
