// Finding the connection at the sign-in page's address step (ADR 152): by the address's domain
// alone, a domain an organization verified and a connection covers offers "Continue with
// <organization>" (several connections: a labelled choice), the same for every address of the
// domain, known or not; any other domain's step two is exactly today's. Walked as a browser
// without JavaScript walks it (form POST, then the page) and as a JSON client reads it.
import { beforeEach, describe, expect, it } from "vitest";
import { addConnection } from "../../../app/auth/saml/index.ts";
import { createUser } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, fetchCsrf, get, ORIGIN, post } from "../../support/http.ts";
import { configure } from "../email/helpers.ts";
import { IDP_CERT } from "../saml/idp.ts";
import { send, useApp } from "./helpers.ts";

useApp();

async function org(slug: string, name: string, domain: string | null, state = "verified") {
  const o = await testDb().organization.create({ data: { name, slug } });
  if (domain) {
    await testDb().organizationDomain.create({
      data: { organizationId: o.id, domain, verificationToken: "t", state, verifiedDomain: state === "verified" ? domain : null, verifiedAt: state === "verified" ? new Date() : null },
    });
  }
  return o.id;
}

async function saml(organizationId: string, domains: string[], entity = "https://idp.example.test") {
  const added = await addConnection({ organizationId, idpEntityId: entity, ssoUrl: `${entity}/sso`, certificates: [IDP_CERT], domains });
  if (!added.ok) throw new Error(added.reason);
  return added.id;
}

/** Step one as a browser without JavaScript posts it, then step two's HTML. */
async function stepTwo(address: string) {
  const jar = new CookieJar();
  const csrfToken = await fetchCsrf(jar);
  const res = await send(post("/auth/signin", { csrfToken, callbackUrl: "/account", email: address }, { jar, headers: { Origin: ORIGIN, Accept: "text/html" } }), jar);
  expect(res.status).toBe(302);
  const page = await send(get(new URL(res.headers.get("Location")!).pathname + new URL(res.headers.get("Location")!).search, { jar, headers: { Accept: "text/html" } }), jar);
  expect(page.status).toBe(200);
  return page.text();
}

/** Step one as a JSON client sends it: `{url, connections}`. */
async function stepJson(address: string) {
  const jar = new CookieJar();
  const csrfToken = await fetchCsrf(jar);
  const res = await send(post("/auth/signin", { csrfToken, callbackUrl: "/account", email: address }, { jar, headers: { Origin: ORIGIN, "X-Auth-Return-Redirect": "1" } }), jar);
  expect(res.status).toBe(200);
  return (await res.json()) as { url: string; connections: { id: string; organizationName: string; url: string }[] };
}

const comparable = (html: string, address: string) => html.replaceAll(/nonce="[^"]*"/g, "").replaceAll(/[0-9a-f]{64}/g, "<csrf>").replaceAll(address, "<address>");

beforeEach(async () => {
  await resetDatabase();
  configure({ AUTH_ORGANIZATIONS: "true" });
});

describe(`finding the connection at the address step (${dbLabel})`, () => {
  it("a verified domain with a SAML connection offers Continue with the organization, the same for a known and an unknown address", async () => {
    const acme = await org("acme", "Acme Corp", "acme.test");
    const id = await saml(acme, ["acme.test"]);
    await createUser("known@acme.test");
    const known = await stepTwo("known@acme.test");
    const unknown = await stepTwo("nobody@acme.test");
    expect(known).toContain("Continue with Acme Corp");
    expect(known).toContain(`href="/sso/${id}/signin?callbackUrl=%2Faccount"`);
    // The password and the e-mail link stay beside it.
    expect(known).toContain('id="credentials-form"');
    expect(comparable(known, "known@acme.test")).toBe(comparable(unknown, "nobody@acme.test"));
    // Upper case, as typed, is the same domain.
    expect(await stepTwo("Someone@ACME.test")).toContain("Continue with Acme Corp");

    const json = await stepJson("known@acme.test");
    expect(json.url).toBe(`${ORIGIN}/auth/signin?step=methods&callbackUrl=%2Faccount`);
    expect(json.connections).toEqual([{ id, organizationName: "Acme Corp", url: `/sso/${id}/signin?callbackUrl=%2Faccount` }]);
    expect(await stepJson("nobody@acme.test")).toEqual(json);
  });

  it("several connections for one domain: a choice, each labelled with its organization", async () => {
    const acme = await org("acme", "Acme Corp", "acme.test");
    const first = await saml(acme, ["acme.test"], "https://idp-one.example.test");
    const second = await saml(acme, ["acme.test"], "https://idp-two.example.test");
    const html = await stepTwo("ada@acme.test");
    expect(html).toContain("Continue with Acme Corp");
    expect(html).toContain(`data-connection="${first}"`);
    expect(html).toContain(`data-connection="${second}"`);
    expect((await stepJson("ada@acme.test")).connections.map((c) => c.id).sort()).toEqual([first, second].sort());
  });

  it("a domain without a connection, a claim nobody verified, a subdomain and organizations off: step two exactly as today", async () => {
    const acme = await org("acme", "Acme Corp", "acme.test");
    await saml(acme, ["acme.test"]);
    await org("other", "Other", "other.test"); // verified, no connection
    const plain = await stepTwo("ada@plain.test");
    expect(plain).not.toContain('id="signin-connections"');
    for (const address of ["ada@other.test", "ada@sub.acme.test", "ada@acme.test.evil.test"]) {
      expect(comparable(await stepTwo(address), address)).toBe(comparable(plain, "ada@plain.test"));
      expect((await stepJson(address)).connections).toEqual([]);
    }
    // The domain is no longer verified: the connection that lists it offers nothing.
    await testDb().organizationDomain.updateMany({ data: { state: "failed", verifiedDomain: null } });
    expect((await stepJson("ada@acme.test")).connections).toEqual([]);
    configure({ AUTH_ORGANIZATIONS: undefined });
    expect(await stepTwo("ada@acme.test")).not.toContain('id="signin-connections"');
  });
});
