// The roles of an organization (docs/features/organizations.md, ADR 146): `owner` may do
// everything, including deleting the organization and naming owners; `admin` manages members,
// invitations and domains; `member` works in it. A role is stored as its name on Membership.role.

export const ORG_ROLES = ["owner", "admin", "member"] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

const RANK: Record<OrgRole, number> = { member: 1, admin: 2, owner: 3 };

export function isOrgRole(value: unknown): value is OrgRole {
  return (ORG_ROLES as readonly unknown[]).includes(value);
}

/** Whether `role` is at least `floor` (an owner is also an admin and a member). */
export function atLeast(role: OrgRole, floor: OrgRole): boolean {
  return RANK[role] >= RANK[floor];
}

/**
 * Whether someone with `actor`'s role may give `target` the role `next` (or take the one they have):
 * admins manage admins and members; only owners touch the owner role, theirs or another's.
 */
export function mayAssign(actor: OrgRole, current: OrgRole, next: OrgRole): boolean {
  if (!atLeast(actor, "admin")) return false;
  if (current === "owner" || next === "owner") return actor === "owner";
  return true;
}
