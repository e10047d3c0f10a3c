// Organizations (docs/features/organizations.md): what the pages and app routes use.
export { requireOrganization, ORGANIZATION_REQUIRED, ORGANIZATIONS_PATH, type RequiredOrganization } from "./require.server";
export { activeOrganization, makeActive, sessionOrganizationField, switchOrganization, type ActiveOrganization } from "./active.server";
export { ORG_ROLES, atLeast, isOrgRole, mayAssign, type OrgRole } from "./roles";
export { recheckDomains, recheckDomainsLogged } from "./domains.server";
