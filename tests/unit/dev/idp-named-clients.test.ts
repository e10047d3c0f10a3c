// A second OpenID provider tried locally (docs/providers.md): under `npm run dev` the bundled dev
// IdP serves, beside provider `oidc`'s client, one client for each named provider
// (AUTH_OIDC_<NAME>_*) whose issuer is the dev IdP's own address, redirecting to
// /auth/callback/<name>. Before, such a provider met `invalid_client` / `invalid_redirect_uri`.
import { afterEach, expect, it } from "vitest";
import { DEV_IDP_CLIENT, devIdpClients, startDevIdp, type RunningIdp } from "../../../app/dev/idp.server";
import { freePort } from "../../support/browser";

const running: RunningIdp[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((idp) => idp.stop()));
});

const named = (issuer: string) => [
  { id: "acme", issuer, clientId: "acme-app", clientSecret: "acme-secret" },
  { id: "elsewhere", issuer: "https://login.example.com", clientId: "other", clientSecret: "x" },
];

/** The dev IdP's answer to an authorization request of `clientId` returning to `redirectUri`. */
async function authorize(idp: RunningIdp, clientId: string, redirectUri: string): Promise<Response> {
  const discovery = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as { authorization_endpoint: string };
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: "code",
    scope: "openid email profile",
    state: "s",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
  });
  return fetch(`${discovery.authorization_endpoint}?${query}`, { redirect: "manual" });
}

it("gives each named provider whose issuer is the dev IdP a client of its own, and no other", () => {
  expect(devIdpClients(5556, named("http://localhost:5556/"))).toEqual([DEV_IDP_CLIENT, { clientId: "acme-app", clientSecret: "acme-secret", callbackPath: "/auth/callback/acme" }]);
  expect(devIdpClients(5556, named("http://127.0.0.1:5556"))).toHaveLength(2);
  expect(devIdpClients(5556, named("http://localhost:5557"))).toEqual([DEV_IDP_CLIENT]);
});

it("serves the named provider's sign-in to its own callback on any loopback port, and still refuses what it does not know", async () => {
  const port = await freePort();
  const idp = await startDevIdp({ port, strictPort: true, host: "localhost", clients: devIdpClients(port, named(`http://localhost:${port}`)) });
  running.push(idp);
  const acme = await authorize(idp, "acme-app", "http://localhost:5173/auth/callback/acme");
  expect(acme.status).toBe(303);
  expect(acme.headers.get("location")).toMatch(/\/interaction\//);
  const oidc = await authorize(idp, DEV_IDP_CLIENT.clientId, "http://localhost:5173/auth/callback/oidc");
  expect(oidc.status).toBe(303);
  // The other callback, and a client the IdP does not serve, are refused as before.
  const wrongPath = await authorize(idp, "acme-app", "http://localhost:5173/auth/callback/oidc");
  expect(wrongPath.status).toBe(400);
  expect(await wrongPath.text()).toMatch(/redirect_uri/);
  const unknown = await authorize(idp, "other", "http://localhost:5173/auth/callback/elsewhere");
  expect(unknown.status).toBe(400);
  expect(await unknown.text()).toMatch(/client/);
});
