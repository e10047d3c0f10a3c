// The /orgs pages (docs/features/organizations.md, ADR 146-150): the list of my organizations and
// the switch, creating one, one organization's page with every change as an intent, its audit log,
// and an invitation's page. Off unless AUTH_ORGANIZATIONS=true: then every URL here is the 404 an
// unknown URL gets. A signed-in user who is not a member of `<slug>` gets that 404 too, for every
// /orgs/<slug> URL, exactly as for a slug nobody has. Each change needs a recent sign-in (the form
// answers 403 with the link to sign in again; a JSON client gets 403 ReauthRequired), writes an
// audit event, and answers both shapes: a form post (redirect with a notice, or the refusal beside
// the form) and a JSON client (X-Auth-Return-Redirect: 1 or json=true: `{ok: true, …}` or
// `{error, message}` with the status).
import { data, redirect } from "react-router";
import { z } from "zod";
import { isAdmin } from "~/auth/accounts/roles.server";
import { BadRequestError, ensureCsrfToken, getConfig, headersWith, isRecentAuth, readBody, reauthRefusal, reauthRequiredResponse, reauthUrl, requireSession, toRelative, validateCallbackUrl, verifyCsrf, type AuthRequest, type CurrentSession } from "~/auth/core";
import { checkName } from "~/auth/core/display-text";
import { ID_PATTERN } from "~/auth/core/ids";
import { limitMessage } from "~/auth/core/messages.server";
import { clientAddress } from "~/auth/core/request.server";
import { jsonResponse, wantsJsonRedirect } from "~/auth/core/respond.server";
import { activeOrganization, makeActive, switchOrganization } from "~/auth/organizations";
import { AUDIT_CSV_COLUMNS, orgEventPage, orgEventsCsv, orgEventsForDownload, type OrgActor } from "~/auth/organizations/audit.server";
import { addDomain, domainNamed, listDomains, removeDomain, verifyDomain } from "~/auth/organizations/domains.server";
import { addCertificatesAs, addConnectionAs, listConnections, removeCertificateAs, removeConnectionAs, setIdpInitiatedAs, type ConnectionRefusal, type IdpMetadataFailure } from "~/auth/saml";
import { OIDC_INTENTS, oidcConnectionIntent, oidcConnectionsSection } from "./orgs-oidc.server";
import { acceptInvitation, invitationFor, INVITATION_PATH, inviteMember, listOpenInvitations, resendInvitation, revokeInvitation, type InvitationResult } from "~/auth/organizations/invitations.server";
import {
  changeMemberRole,
  createOrganization,
  deleteOrganization,
  findMemberContext,
  leaveOrganization,
  listMembers,
  listMyOrganizations,
  ORG_NAME_MAX,
  removeMember,
  renameOrganization,
  SLUG_PATTERN,
  type MemberContext,
  type OrgRefusal,
} from "~/auth/organizations/organizations.server";
import { atLeast, ORG_ROLES } from "~/auth/organizations/roles";
import { SCIM_BASE_PATH } from "~/auth/organizations/scim/service.server";
import { createScimToken, listScimTokens, revokeScimToken, SCIM_TOKEN_NAME_MAX } from "~/auth/organizations/scim/tokens.server";
import { db } from "~/db/client.server";
import { policyData, policyIntent } from "./orgs-policy.server";
import { withWords } from "./orgs-audit-words.server";
import { sessionOutsideSso } from "~/auth/organizations/policy.server";
import { currentDirection, t } from "~/i18n/t.server";
import type { MessageKey } from "~/i18n/catalogues/en";

export const ORGS_PATH = "/orgs";
export const orgPath = (slug: string) => `${ORGS_PATH}/${encodeURIComponent(slug)}`;

/** The unknown-URL answer (routes/not-found.tsx throws the same). */
function notFound(): never {
  throw data("Not found", { status: 404 });
}

function organizationsOn(): void {
  if (!getConfig().organizations) notFound();
}

/** Pages here show members, addresses and an audit log: no cache may keep a copy. */
export function noStore(parent: Headers): Headers {
  const headers = new Headers(parent);
  headers.set("Cache-Control", "private, no-store");
  return headers;
}

function actorOf(ar: AuthRequest, session: CurrentSession): OrgActor {
  return { userId: session.userId, email: session.data.user.email, ip: clientAddress(ar) };
}

/**
 * A refusal: its status, its JSON code, and the sentence shown beside the form. `field` names the
 * field (or the row, `domain:<id>`) the sentence is shown beside; `values` are what the visitor
 * typed, put back into the form so nothing typed is lost.
 */
type Refusal = { status: number; code: string; message: string; field?: string; values?: Record<string, string> };
const refusal = (status: number, code: string, key: MessageKey, values?: Record<string, string | number>): Refusal => ({ status, code, message: t(key, values) });
const at = (r: Refusal, field: string, values?: Record<string, string>): Refusal => ({ ...r, field, values });

/** An address or domain inside a sentence: isolated, so a right-to-left sentence keeps its order. */
const isolated = (text: string) => (currentDirection() === "rtl" ? `\u2068${text}\u2069` : text);

const ORG_REFUSALS: Record<OrgRefusal, () => Refusal> = {
  "not-found": () => refusal(404, "NotFound", "org.error.notFound"),
  forbidden: () => refusal(403, "Forbidden", "org.error.forbidden"),
  "last-owner": () => refusal(409, "LastOwner", "org.error.lastOwner"),
  "slug-taken": () => refusal(409, "SlugTaken", "org.error.slugTaken"),
  invalid: () => refusal(400, "InvalidInput", "org.error.invalid"),
};

function invitationRefusal(result: Exclude<InvitationResult, { ok: true }>, address = ""): Refusal {
  switch (result.reason) {
    case "rate-limited":
      return { status: 429, code: "RateLimited", message: limitMessage(result.refusal) };
    case "invalid-address":
      return at(refusal(400, "InvalidAddress", "org.error.invalidAddress"), "invite-email", { email: address });
    case "invalid-role":
      return refusal(400, "InvalidInput", "org.error.invalid");
    case "forbidden":
      return ORG_REFUSALS.forbidden();
    case "already-invited":
      return at(refusal(409, "AlreadyInvited", "org.error.alreadyInvited", { address: isolated(address) }), "invite-email", { email: address });
    case "already-member":
      return at(refusal(409, "AlreadyMember", "org.error.alreadyMember", { address: isolated(address) }), "invite-email", { email: address });
    case "not-found":
      return ORG_REFUSALS["not-found"]();
    case "too-many-sends":
      return refusal(429, "TooManySends", "org.error.tooManySends");
    case "too-soon":
      return refusal(429, "TooSoon", "org.error.tooSoon");
    case "mail-unavailable":
      return refusal(400, "MailUnavailable", "org.error.mailUnavailable");
    case "mail-failed":
      return refusal(502, "EmailSignin", "error.EmailSignin");
  }
}

/** A domain refusal, named and shown beside what it is about: the add form (`typed`) or the domain's row. */
const DOMAIN_REFUSALS = {
  forbidden: () => ORG_REFUSALS.forbidden(),
  "not-found": () => ORG_REFUSALS["not-found"](),
  "invalid-domain": (d: DomainSubject) => at(refusal(400, "InvalidDomain", "org.error.invalidDomain"), "domain-name", { domain: d.typed ?? "" }),
  "consumer-domain": (d: DomainSubject) => at(refusal(400, "ConsumerDomain", "org.error.consumerDomain", { domain: isolated(d.name) }), "domain-name", { domain: d.typed ?? "" }),
  "already-added": (d: DomainSubject) => at(refusal(409, "AlreadyAdded", "org.error.alreadyAdded", { domain: isolated(d.name) }), "domain-name", { domain: d.typed ?? "" }),
  "record-missing": (d: DomainSubject) => at(refusal(400, "RecordMissing", "org.error.recordMissing", { domain: isolated(d.name) }), `domain:${d.id ?? ""}`),
  "dns-error": (d: DomainSubject) => at(refusal(502, "DnsError", "org.error.dnsError", { domain: isolated(d.name) }), `domain:${d.id ?? ""}`),
  taken: (d: DomainSubject) => (d.id ? at(refusal(409, "DomainTaken", "org.error.domainTaken", { domain: isolated(d.name) }), `domain:${d.id}`) : at(refusal(409, "DomainTaken", "org.error.domainTaken", { domain: isolated(d.name) }), "domain-name", { domain: d.typed ?? "" })),
} as const;
type DomainSubject = { name: string; typed?: string; id?: string };

const SAML_REFUSALS: Record<ConnectionRefusal, () => Refusal> = {
  forbidden: () => ORG_REFUSALS.forbidden(),
  "not-found": () => ORG_REFUSALS["not-found"](),
  invalid: () => refusal(400, "InvalidInput", "org.error.samlInvalid"),
  // Each bad metadata has its own sentence; one code for all of them.
  metadata: () => refusal(400, "InvalidMetadata", "org.error.samlInvalid"),
  "bad-certificate": () => refusal(400, "InvalidCertificate", "org.error.samlCertificate"),
  "too-many-certificates": () => refusal(400, "TooManyCertificates", "org.error.samlTooManyCertificates"),
  "last-certificate": () => refusal(409, "LastCertificate", "org.error.samlLastCertificate"),
};
const METADATA_MESSAGES: Record<IdpMetadataFailure, MessageKey> = {
  "too-large": "org.saml.metadataError.tooLarge",
  "not-xml": "org.saml.metadataError.notXml",
  doctype: "org.saml.metadataError.doctype",
  "not-idp-metadata": "org.saml.metadataError.notIdpMetadata",
  "several-idps": "org.saml.metadataError.severalIdps",
  "no-entity-id": "org.saml.metadataError.noEntityId",
  "no-redirect-sso": "org.saml.metadataError.noRedirectSso",
  "no-signing-certificate": "org.saml.metadataError.noSigningCertificate",
  "bad-certificate": "org.saml.metadataError.badCertificate",
  "fetch-url": "org.saml.metadataError.fetchUrl",
  "fetch-address": "org.saml.metadataError.fetchAddress",
  "fetch-failed": "org.saml.metadataError.fetchFailed",
  "fetch-timeout": "org.saml.metadataError.fetchTimeout",
};
function samlRefusal(result: { reason: ConnectionRefusal; failure?: IdpMetadataFailure }): Refusal {
  if (result.reason === "metadata" && result.failure) return refusal(400, "InvalidMetadata", METADATA_MESSAGES[result.failure]);
  return SAML_REFUSALS[result.reason]();
}

/** What an action did: where a form goes next (with its notice) and what a JSON client reads; or a refusal. */
type Outcome = { ok: true; location: string; json?: Record<string, unknown>; setCookies?: string[] } | { ok: false; refusal: Refusal };

function answer(request: Request, body: Record<string, unknown> | null, outcome: Outcome): Response | ReturnType<typeof data> {
  const json = wantsJsonRedirect(request, body ?? undefined);
  if (outcome.ok) {
    if (json) return jsonResponse({ ok: true, ...outcome.json }, { noCache: true, setCookies: outcome.setCookies });
    throw redirect(outcome.location, { headers: headersWith(outcome.setCookies ?? []) });
  }
  const { status, code, message, field, values } = outcome.refusal;
  if (json) return jsonResponse({ error: code, message }, { status, noCache: true });
  return data({ formError: message, field, values }, { status });
}

/**
 * The signed-in session and the body of a POST whose CSRF token is right; else the refusal's
 * answer (thrown): a refused body, a stale form.
 */
type Post = { ar: AuthRequest; session: CurrentSession; body: Record<string, unknown>; refused?: undefined } | { refused: Response | ReturnType<typeof data> };

async function postOf(request: Request): Promise<Post> {
  organizationsOn();
  const { ar, session } = await requireSession(request, { roll: false });
  let body: Record<string, unknown>;
  try {
    body = await readBody(request);
  } catch (error) {
    const status = error instanceof BadRequestError ? error.status : 400;
    const message = status === 413 ? t("boundary.tooLarge.message") : status === 415 ? t("boundary.unsupported.message") : t("common.unknownRequest");
    return { refused: answer(request, null, { ok: false, refusal: { status, code: "BadRequest", message } }) };
  }
  if (!verifyCsrf(ar, body.csrfToken)) return { refused: answer(request, body, { ok: false, refusal: { status: 403, code: "MissingCSRF", message: t("common.formExpired") } }) };
  return { ar, session, body };
}

/** The recent sign-in rule: past the window, nothing changes and the answer says where to sign in again. */
async function recentAuthGate(request: Request, ar: AuthRequest, session: CurrentSession, body: Record<string, unknown>, page: string) {
  if (await isRecentAuth(ar, session)) return null;
  if (wantsJsonRedirect(request, body)) return reauthRequiredResponse(ar, page);
  return data(reauthRefusal(ar, page), { status: 403 });
}

/** The member's context for `slug`, or the 404 of an unknown URL. */
async function memberContext(ar: AuthRequest, session: CurrentSession, slug: string | undefined): Promise<MemberContext> {
  const found = slug ? await findMemberContext(slug, session.userId) : null;
  if (!found) notFound();
  return { ...found, actor: actorOf(ar, session) };
}

function csrfHeaders(ar: AuthRequest, setCookies: string[]) {
  const csrf = ensureCsrfToken(ar);
  return { token: csrf.token, headers: headersWith([...setCookies, csrf.setCookie]) };
}

const DONE = ["created", "renamed", "role-changed", "removed", "invited", "resent", "revoked", "domain-added", "domain-verified", "domain-removed", "joined", "switched", "left", "deleted", "scim-token-revoked", "saml-added", "saml-removed", "oidc-added", "oidc-removed", "policy-saved", "saml-certificate-added", "saml-certificate-removed", "saml-idp-initiated-on", "saml-idp-initiated-off"] as const;
type Done = (typeof DONE)[number];
const DONE_KEYS: Record<Done, MessageKey> = {
  created: "org.done.created",
  renamed: "org.done.renamed",
  "role-changed": "org.done.roleChanged",
  removed: "org.done.removed",
  invited: "org.done.invited",
  resent: "org.done.resent",
  revoked: "org.done.revoked",
  "domain-added": "org.done.domainAdded",
  "domain-verified": "org.done.domainVerified",
  "domain-removed": "org.done.domainRemoved",
  "saml-added": "org.done.samlAdded",
  "saml-removed": "org.done.samlRemoved",
  "oidc-added": "org.done.oidcAdded",
  "oidc-removed": "org.done.oidcRemoved",
  "policy-saved": "org.done.policySaved",
  "saml-certificate-added": "org.done.samlCertificateAdded",
  "saml-certificate-removed": "org.done.samlCertificateRemoved",
  "saml-idp-initiated-on": "org.done.samlIdpInitiatedOn",
  "saml-idp-initiated-off": "org.done.samlIdpInitiatedOff",
  joined: "org.done.joined",
  switched: "org.done.switched",
  left: "org.done.left",
  deleted: "org.done.deleted",
  "scim-token-revoked": "org.done.scimTokenRevoked",
};
function noticeOf(url: URL, organization?: string): string | null {
  const done = url.searchParams.get("done");
  // On the organization's own page, joining names what was joined.
  if (done === "joined" && organization) return t("org.done.joinedNamed", { name: organization });
  return done && (DONE as readonly string[]).includes(done) ? t(DONE_KEYS[done as Done]) : null;
}

// ---------------------------------------------------------------------------------------------
// GET /orgs and POST /orgs/switch

/** Whether this user may create an organization: a verified address, and an admin when AUTH_ORGANIZATIONS_CREATE=admins. */
async function mayCreate(userId: string): Promise<"yes" | "unverified" | "admins"> {
  const user = await db().user.findUnique({ where: { id: userId }, select: { emailVerified: true } });
  if (!user?.emailVerified) return "unverified";
  if (getConfig().organizationsCreate === "admins" && !(await isAdmin(userId))) return "admins";
  return "yes";
}

export async function orgListPage(request: Request) {
  organizationsOn();
  const { ar, session, setCookies } = await requireSession(request);
  const csrf = csrfHeaders(ar, setCookies);
  const [organizations, active, create] = await Promise.all([listMyOrganizations(session.userId), activeOrganization(session), mayCreate(session.userId)]);
  const back = validateCallbackUrl(ar.url.searchParams.get("callbackUrl"), ar.origin);
  return {
    data: {
      csrfToken: csrf.token,
      organizations,
      active: active ? active.slug : null,
      canCreate: create === "yes",
      callbackUrl: back ? toRelative(back) : null,
      notice: noticeOf(ar.url),
    },
    headers: csrf.headers,
  };
}

export async function switchAction(request: Request) {
  const post = await postOf(request);
  if (post.refused) return post.refused;
  const { ar, session, body } = post;
  const slug = typeof body.slug === "string" ? body.slug : "";
  const result = await switchOrganization(ar, session, slug || null);
  if (!result.ok) return answer(request, body, { ok: false, refusal: ORG_REFUSALS["not-found"]() });
  const back = validateCallbackUrl(typeof body.callbackUrl === "string" ? body.callbackUrl : null, ar.origin);
  return answer(request, body, {
    ok: true,
    location: back ? toRelative(back) : `${ORGS_PATH}?done=switched`,
    json: { organization: result.organization },
    setCookies: result.setCookies,
  });
}

// ---------------------------------------------------------------------------------------------
// GET and POST /orgs/new

export async function newOrgPage(request: Request) {
  organizationsOn();
  const { ar, session, setCookies } = await requireSession(request);
  const csrf = csrfHeaders(ar, setCookies);
  return {
    data: { csrfToken: csrf.token, create: await mayCreate(session.userId), recentAuth: { recent: await isRecentAuth(ar, session), url: reauthUrl(ar, `${ORGS_PATH}/new`) } },
    headers: csrf.headers,
  };
}

const NewOrg = z.object({ name: z.string(), slug: z.string() });

export async function createAction(request: Request) {
  const post = await postOf(request);
  if (post.refused) return post.refused;
  const { ar, session, body } = post;
  const stale = await recentAuthGate(request, ar, session, body, `${ORGS_PATH}/new`);
  if (stale) return stale;
  const create = await mayCreate(session.userId);
  if (create !== "yes") return answer(request, body, { ok: false, refusal: refusal(403, "Forbidden", create === "unverified" ? "org.new.unverified" : "org.new.adminsOnly") });
  const parsed = NewOrg.safeParse(body);
  if (!parsed.success) return answer(request, body, { ok: false, refusal: ORG_REFUSALS.invalid() });
  // A refused form comes back with what was typed in both fields.
  const typed = { name: parsed.data.name.slice(0, ORG_NAME_MAX * 2), slug: parsed.data.slug.slice(0, 80) };
  const name = checkName(parsed.data.name, ORG_NAME_MAX);
  if (!name.ok) return answer(request, body, { ok: false, refusal: at(refusal(400, "InvalidName", "org.error.name", { max: ORG_NAME_MAX }), "org-name", typed) });
  const slug = parsed.data.slug.trim().toLowerCase();
  const result = await createOrganization(session.userId, { name: name.name, slug }, actorOf(ar, session));
  if (!result.ok) {
    const refused = result.reason === "invalid" ? refusal(400, "InvalidSlug", "org.error.slug") : ORG_REFUSALS[result.reason]();
    return answer(request, body, { ok: false, refusal: result.reason === "invalid" || result.reason === "slug-taken" ? at(refused, "org-slug", typed) : { ...refused, values: typed } });
  }
  await makeActive(session, result.organization.id);
  return answer(request, body, { ok: true, location: `${orgPath(result.organization.slug)}?done=created`, json: { organization: { id: result.organization.id, slug: result.organization.slug } } });
}

// ---------------------------------------------------------------------------------------------
// GET and POST /orgs/<slug>

export async function orgPage(request: Request, slug: string | undefined) {
  organizationsOn();
  const { ar, session, setCookies } = await requireSession(request);
  const ctx = await memberContext(ar, session, slug);
  const csrf = csrfHeaders(ar, setCookies);
  const admin = atLeast(ctx.membership.role, "admin");
  const [members, invitations, domains, scimTokens, samlConnections, active, oidcConnections, policy] = await Promise.all([
    listMembers(ctx.organization.id),
    admin ? listOpenInvitations(ctx.organization.id) : Promise.resolve(null),
    admin ? listDomains(ctx.organization.id) : Promise.resolve(null),
    admin ? listScimTokens(ctx.organization.id) : Promise.resolve(null),
    admin ? listConnections(ctx.organization.id, ar.origin) : Promise.resolve(null),
    activeOrganization(session),
    admin ? oidcConnectionsSection(ctx.organization.id, ar.origin) : Promise.resolve(null),
    policyData(ctx),
  ]);
  return {
    data: {
      csrfToken: csrf.token,
      organization: { id: ctx.organization.id, slug: ctx.organization.slug, name: ctx.organization.name },
      membership: { id: ctx.membership.id, role: ctx.membership.role },
      active: active?.id === ctx.organization.id,
      roles: ORG_ROLES,
      members,
      invitations,
      domains,
      scim: scimTokens ? { tokens: scimTokens, url: new URL(SCIM_BASE_PATH, ar.origin).href } : null,
      samlConnections,
      oidcConnections,
      // The Policy section (orgs-policy.server.ts): admins and owners only.
      policy,
      recentAuth: { recent: await isRecentAuth(ar, session), url: reauthUrl(ar, orgPath(ctx.organization.slug)) },
      notice: noticeOf(ar.url, ctx.organization.name),
    },
    headers: csrf.headers,
  };
}

const OrgIntent = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("rename"), name: z.string() }),
  z.object({ intent: z.literal("delete"), confirm: z.string() }),
  z.object({ intent: z.literal("role"), membershipId: z.string().regex(ID_PATTERN), role: z.string() }),
  z.object({ intent: z.literal("remove"), membershipId: z.string().regex(ID_PATTERN) }),
  z.object({ intent: z.literal("leave") }),
  z.object({ intent: z.literal("invite"), email: z.string(), role: z.string() }),
  z.object({ intent: z.literal("invitation-resend"), invitationId: z.string().regex(ID_PATTERN) }),
  z.object({ intent: z.literal("invitation-revoke"), invitationId: z.string().regex(ID_PATTERN) }),
  z.object({ intent: z.literal("domain-add"), domain: z.string() }),
  z.object({ intent: z.literal("domain-verify"), domainId: z.string().regex(ID_PATTERN) }),
  z.object({ intent: z.literal("domain-remove"), domainId: z.string().regex(ID_PATTERN) }),
  z.object({ intent: z.literal("scim-token-create"), name: z.string() }),
  z.object({ intent: z.literal("scim-token-revoke"), tokenId: z.string().regex(ID_PATTERN) }),
]);

// The SAML section's intents (docs/features/saml.md): handled by samlOutcome below.
const SamlIntent = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("saml-add"),
    idpEntityId: z.string().default(""),
    ssoUrl: z.string().default(""),
    certificates: z.string().default(""),
    metadataXml: z.string().optional(),
    metadataUrl: z.string().optional(),
    domains: z.string(),
    idpInitiated: z.string().optional(),
    emailAttribute: z.string().optional(),
    nameAttribute: z.string().optional(),
  }),
  z.object({ intent: z.literal("saml-remove"), connectionId: z.string().regex(ID_PATTERN) }),
  z.object({ intent: z.literal("saml-certificate-add"), connectionId: z.string().regex(ID_PATTERN), certificate: z.string() }),
  z.object({ intent: z.literal("saml-certificate-remove"), connectionId: z.string().regex(ID_PATTERN), fingerprint: z.string().max(200) }),
  z.object({ intent: z.literal("saml-idp-initiated"), connectionId: z.string().regex(ID_PATTERN), enabled: z.enum(["on", "off", "true", "false"]) }),
]);

/** What a SAML intent did, as the page's other intents answer. */
async function samlOutcome(ctx: MemberContext, input: z.infer<typeof SamlIntent>, done: (what: Done, json?: Record<string, unknown>) => Outcome): Promise<Outcome> {
  const outcome = (r: { ok: true } | { ok: false; reason: ConnectionRefusal; failure?: IdpMetadataFailure }, what: Done, json: Record<string, unknown> = {}): Outcome =>
    r.ok ? done(what, json) : { ok: false, refusal: samlRefusal(r) };
  switch (input.intent) {
    case "saml-add": {
      const added = await addConnectionAs(ctx, {
        idpEntityId: input.idpEntityId,
        ssoUrl: input.ssoUrl,
        certificates: input.certificates,
        metadataXml: input.metadataXml,
        metadataUrl: input.metadataUrl,
        domains: input.domains,
        idpInitiated: input.idpInitiated === "on" || input.idpInitiated === "true",
        emailAttribute: input.emailAttribute ?? "",
        nameAttribute: input.nameAttribute ?? "",
      });
      return outcome(added, "saml-added", added.ok ? { connection: { id: added.id } } : {});
    }
    case "saml-remove":
      return outcome(await removeConnectionAs(ctx, input.connectionId), "saml-removed");
    case "saml-certificate-add":
      return outcome(await addCertificatesAs(ctx, input.connectionId, input.certificate), "saml-certificate-added");
    case "saml-certificate-remove":
      return outcome(await removeCertificateAs(ctx, input.connectionId, input.fingerprint), "saml-certificate-removed");
    case "saml-idp-initiated": {
      const on = input.enabled === "on" || input.enabled === "true";
      return outcome(await setIdpInitiatedAs(ctx, input.connectionId, on), on ? "saml-idp-initiated-on" : "saml-idp-initiated-off");
    }
  }
}

export async function orgAction(request: Request, slug: string | undefined) {
  const post = await postOf(request);
  if (post.refused) return post.refused;
  const { ar, session, body } = post;
  // Membership first: a non-member learns nothing, not even that a recent sign-in would be asked.
  const ctx = await memberContext(ar, session, slug);
  const page = orgPath(ctx.organization.slug);
  const stale = await recentAuthGate(request, ar, session, body, page);
  if (stale) return stale;
  // The Policy section's intent lives in its own module (orgs-policy.server.ts).
  if (body.intent === "policy") {
    const outcome = await policyIntent(ar, ctx, body);
    return answer(request, body, outcome.ok ? { ok: true, location: `${page}?done=policy-saved#policy-heading`, json: outcome.json } : outcome);
  }
  const done = (what: Done, json: Record<string, unknown> = {}): Outcome => ({ ok: true, location: `${page}?done=${what}`, json });
  // The OpenID Connect connections section's intents (orgs-oidc.server.ts).
  if ((OIDC_INTENTS as readonly unknown[]).includes(body.intent)) {
    if (!atLeast(ctx.membership.role, "admin")) return answer(request, body, { ok: false, refusal: ORG_REFUSALS.forbidden() });
    const oidc = await oidcConnectionIntent(ctx, body);
    return answer(request, body, oidc.ok ? done(oidc.done, oidc.json) : oidc);
  }
  const saml = SamlIntent.safeParse(body);
  if (saml.success) return answer(request, body, await samlOutcome(ctx, saml.data, done));
  const parsed = OrgIntent.safeParse(body);
  if (!parsed.success) return answer(request, body, { ok: false, refusal: refusal(400, "BadRequest", "common.unknownRequest") });
  const input = parsed.data;
  const orgOutcome = (r: { ok: true } | { ok: false; reason: OrgRefusal }, what: Done): Outcome => (r.ok ? done(what) : { ok: false, refusal: ORG_REFUSALS[r.reason]() });
  const invitationOutcome = (r: InvitationResult, what: Done, address?: string): Outcome => (r.ok ? done(what) : { ok: false, refusal: invitationRefusal(r, address) });
  const domainOutcome = (r: { ok: true } | { ok: false; reason: keyof typeof DOMAIN_REFUSALS }, what: Done, subject: DomainSubject): Outcome => (r.ok ? done(what) : { ok: false, refusal: DOMAIN_REFUSALS[r.reason](subject) });

  switch (input.intent) {
    case "rename": {
      const name = checkName(input.name, ORG_NAME_MAX);
      if (!name.ok) return answer(request, body, { ok: false, refusal: at(refusal(400, "InvalidName", "org.error.name", { max: ORG_NAME_MAX }), "org-rename", { rename: input.name.slice(0, ORG_NAME_MAX * 2) }) });
      return answer(request, body, orgOutcome(await renameOrganization(ctx, name.name), "renamed"));
    }
    case "delete": {
      if (ctx.membership.role !== "owner") return answer(request, body, { ok: false, refusal: ORG_REFUSALS.forbidden() });
      if (input.confirm.trim().toLowerCase() !== ctx.organization.slug) return answer(request, body, { ok: false, refusal: refusal(400, "ConfirmationRequired", "org.error.confirm", { slug: ctx.organization.slug }) });
      const result = await deleteOrganization(ctx);
      return answer(request, body, result.ok ? { ok: true, location: `${ORGS_PATH}?done=deleted` } : { ok: false, refusal: ORG_REFUSALS[result.reason]() });
    }
    case "role":
      return answer(request, body, orgOutcome(await changeMemberRole(ctx, input.membershipId, input.role), "role-changed"));
    case "remove": {
      // Removing oneself is leaving: it goes where leaving goes.
      if (input.membershipId === ctx.membership.id) {
        const left = await leaveOrganization(ctx);
        return answer(request, body, left.ok ? { ok: true, location: `${ORGS_PATH}?done=left` } : { ok: false, refusal: ORG_REFUSALS[left.reason]() });
      }
      return answer(request, body, orgOutcome(await removeMember(ctx, input.membershipId), "removed"));
    }
    case "leave": {
      const left = await leaveOrganization(ctx);
      return answer(request, body, left.ok ? { ok: true, location: `${ORGS_PATH}?done=left` } : { ok: false, refusal: ORG_REFUSALS[left.reason]() });
    }
    case "invite":
      return answer(request, body, invitationOutcome(await inviteMember(ar, ctx, { email: input.email, role: input.role }), "invited", input.email.trim().slice(0, 320)));
    case "invitation-resend":
      return answer(request, body, invitationOutcome(await resendInvitation(ar, ctx, input.invitationId), "resent"));
    case "invitation-revoke":
      return answer(request, body, invitationOutcome(await revokeInvitation(ctx, input.invitationId), "revoked"));
    case "domain-add": {
      const typed = input.domain.trim().slice(0, 253);
      return answer(request, body, domainOutcome(await addDomain(ctx, input.domain), "domain-added", { name: typed.toLowerCase(), typed }));
    }
    case "domain-verify": {
      const row = await domainNamed(ctx.organization.id, input.domainId);
      return answer(request, body, domainOutcome(await verifyDomain(ctx, input.domainId), "domain-verified", { name: row ?? "", id: input.domainId }));
    }
    case "domain-remove":
      return answer(request, body, domainOutcome(await removeDomain(ctx, input.domainId), "domain-removed", { name: "", id: input.domainId }));
    case "scim-token-create": {
      const created = await createScimToken(ctx, input.name);
      if (!created.ok) return answer(request, body, { ok: false, refusal: created.reason === "invalid" ? refusal(400, "InvalidName", "org.error.name", { max: SCIM_TOKEN_NAME_MAX }) : ORG_REFUSALS[created.reason]() });
      // Shown once: in this answer only (the page renders it from the action's data, never from a URL).
      if (wantsJsonRedirect(request, body)) return jsonResponse({ ok: true, token: created.token }, { noCache: true });
      return data({ scimToken: { name: created.token.name, secret: created.token.secret } }, { headers: { "Cache-Control": "private, no-store" } });
    }
    case "scim-token-revoke":
      return answer(request, body, orgOutcome(await revokeScimToken(ctx, input.tokenId), "scim-token-revoked"));
  }
}

// ---------------------------------------------------------------------------------------------
// GET /orgs/<slug>/audit (?page=N; ?format=json or csv downloads everything)

export async function auditPage(request: Request, slug: string | undefined) {
  organizationsOn();
  const { ar, session, setCookies } = await requireSession(request);
  const ctx = await memberContext(ar, session, slug);
  // Members who are not admins see the members, not the log: a 403, never the data.
  if (!atLeast(ctx.membership.role, "admin")) throw data("Forbidden", { status: 403, headers: headersWith(setCookies) });
  const format = ar.url.searchParams.get("format");
  if (format === "json" || format === "csv") {
    const events = await orgEventsForDownload(ctx.organization.id);
    const name = `${ctx.organization.slug}-audit.${format}`;
    const body = format === "json" ? JSON.stringify({ organization: { id: ctx.organization.id, slug: ctx.organization.slug }, events }, null, 2) : orgEventsCsv(events);
    const headers = headersWith(setCookies);
    headers.set("Content-Type", format === "json" ? "application/json; charset=utf-8" : "text/csv; charset=utf-8");
    headers.set("Content-Disposition", `attachment; filename="${name}"`);
    headers.set("Cache-Control", "private, no-store");
    headers.set("X-Content-Type-Options", "nosniff");
    throw new Response(body, { status: 200, headers });
  }
  const pageNumber = Math.min(Math.max(1, Number.parseInt(ar.url.searchParams.get("page") ?? "1", 10) || 1), 10_000);
  const page = await orgEventPage(ctx.organization.id, pageNumber);
  // The page reads each event's detail in words; the downloads above keep the stored detail.
  const events = await withWords(page.events);
  return {
    data: { organization: { slug: ctx.organization.slug, name: ctx.organization.name }, ...page, events, columns: AUDIT_CSV_COLUMNS },
    headers: headersWith(setCookies),
  };
}

// ---------------------------------------------------------------------------------------------
// GET and POST /orgs/invitation?token=…

export async function invitationPage(request: Request) {
  organizationsOn();
  // A visitor without a session signs in (or signs up) first and comes back to this very link.
  const { ar, session, setCookies } = await requireSession(request);
  const csrf = csrfHeaders(ar, setCookies);
  const token = ar.url.searchParams.get("token");
  const invitation = await invitationFor(token, session.userId, ar.config.secrets);
  const status = invitation.state === "open" || invitation.state === "member" ? 200 : invitation.state === "invalid" ? 404 : 403;
  return { data: { csrfToken: csrf.token, token: invitation.state === "open" ? token : null, invitation }, status, headers: csrf.headers };
}

export async function invitationAction(request: Request) {
  const post = await postOf(request);
  if (post.refused) return post.refused;
  const { ar, session, body } = post;
  // A person whose organization requires its connection joins only from a session that came
  // through it (ADR 165): the refusal names that organization's sign-in.
  const outside = await sessionOutsideSso(session.userId, session.sessionId);
  if (outside) return answer(request, body, { ok: false, refusal: { status: 403, code: "SsoRequired", message: t("error.SsoRequiredBy", { organization: outside.organizationName }) } });
  const result = await acceptInvitation(body.token, session.userId, actorOf(ar, session), ar.config.secrets);
  if (!result.ok) {
    const r =
      result.reason === "wrong-address"
        ? refusal(403, "WrongAddress", "org.invitation.wrongAddress")
        : result.reason === "unverified"
          ? refusal(403, "Unverified", "org.invitation.unverified")
          : refusal(404, "InvalidInvitation", "org.invitation.invalid");
    return answer(request, body, { ok: false, refusal: r });
  }
  await makeActive(session, result.organization.id);
  return answer(request, body, { ok: true, location: `${orgPath(result.organization.slug)}?done=joined`, json: { organization: { id: result.organization.id, slug: result.organization.slug } } });
}

export { INVITATION_PATH, SLUG_PATTERN };

/**
 * The middleware of /orgs/<slug>/audit: a download (?format=json or csv) is a file, answered before
 * the page would render; a refusal (404, 403) goes on to the page, which answers it as a page.
 */
export async function auditDownloadMiddleware({ request, params }: { request: Request; params: Record<string, string | undefined> }, next: () => Promise<Response>) {
  const format = new URL(request.url).searchParams.get("format");
  if (request.method.toUpperCase() !== "GET" || (format !== "json" && format !== "csv")) return next();
  try {
    await auditPage(request, params.slug);
  } catch (thrown) {
    if (thrown instanceof Response) return thrown;
  }
  return next();
}

// ---------------------------------------------------------------------------------------------
// JSON clients: their answers are JSON before a page would render (the route's middleware).

/** A thrown answer (a Response, or React Router's `data(…, { status })`) as a JSON client reads it. */
function thrownAsJson(thrown: unknown, request: Request): Response {
  if (thrown instanceof Response) return signedOutAsJson(thrown, request) ?? thrown;
  if (thrown && typeof thrown === "object" && (thrown as { type?: unknown }).type === "DataWithResponseInit") {
    const { data: body, init } = thrown as { data: unknown; init?: { status?: number } | null };
    const status = init?.status ?? 200;
    if (status === 404) return jsonResponse({ error: "NotFound", message: t("org.error.notFound") }, { status, noCache: true });
    if (status === 403 && typeof body === "string") return jsonResponse({ error: "Forbidden", message: t("org.error.forbidden") }, { status, noCache: true });
    return jsonResponse(body, { status, noCache: true });
  }
  throw thrown;
}

/**
 * requireSession's sign-in redirect, as a JSON client reads it: `401 {"error":"SessionRequired","url"}`
 * (the sign-in page to send the person to), never a 302 to a page.
 */
export function signedOutAsJson(thrown: Response, request: Request): Response | null {
  const location = thrown.status === 302 ? thrown.headers.get("Location") : null;
  if (!location) return null;
  const url = new URL(location, request.url);
  if (url.searchParams.get("error") !== "SessionRequired") return null;
  return jsonResponse({ error: "SessionRequired", url: url.href }, { status: 401, noCache: true, setCookies: thrown.headers.getSetCookie() });
}

/** Whether a GET asks for JSON (a JSON client), not a page. */
function wantsJsonPage(request: Request): boolean {
  const accept = request.headers.get("Accept") ?? "";
  return request.method.toUpperCase() === "GET" && accept.includes("application/json") && !accept.includes("text/html");
}

type Args = { request: Request; params: Record<string, string | undefined> };

/**
 * The middleware of an /orgs route: a JSON client's POST gets the action's JSON answer; a JSON
 * client's GET gets the page's data as JSON. Browsers go on to the page.
 */
export function orgsJsonMiddleware(
  page: ((request: Request, params: Args["params"]) => Promise<{ data: unknown; status?: number }>) | null,
  action: ((request: Request, params: Args["params"]) => Promise<unknown>) | null,
) {
  return async ({ request, params }: Args, next: () => Promise<Response>): Promise<Response> => {
    if (page && wantsJsonPage(request)) {
      try {
        const answer = await page(request, params);
        return jsonResponse(answer.data, { status: answer.status ?? 200, noCache: true });
      } catch (thrown) {
        return thrownAsJson(thrown, request);
      }
    }
    if (!action || request.method.toUpperCase() !== "POST") return next();
    let body: Record<string, unknown> | undefined;
    try {
      body = await readBody(request);
    } catch {
      body = undefined;
    }
    if (!wantsJsonRedirect(request, body)) return next();
    try {
      const result = await action(request, params);
      return result instanceof Response ? result : jsonResponse(result, { noCache: true });
    } catch (thrown) {
      return thrownAsJson(thrown, request);
    }
  };
}
