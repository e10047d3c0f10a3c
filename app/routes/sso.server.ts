// The /sso/<connectionId>/… routes (docs/features/saml.md) and /sso/oidc/<connectionId>/…
// (docs/features/oidc-connections.md): parse, call app/auth/saml or app/auth/oidc-connections, answer.
import { data } from "react-router";
import { BadRequestError, readBody, refusedBodyResponse } from "~/auth/core/body.server";
import { authRequest } from "~/auth/core/request.server";
import { ACS_BODY_LIMIT, acsRateLimited, connectionFor, consumeAssertion, finishSignIn, metadataResponse, startSignIn } from "~/auth/saml";
import { finishOidcSignIn, oidcConnectionFor, startOidcSignIn } from "~/auth/oidc-connections";

const notFound = () => data("Not found", { status: 404 });

export async function ssoMetadata(request: Request, id: string | undefined): Promise<Response> {
  const ar = authRequest(request);
  const connection = await connectionFor(ar, id);
  if (!connection) throw notFound();
  return metadataResponse(ar, connection);
}

export async function ssoStart(request: Request, id: string | undefined): Promise<Response> {
  const ar = authRequest(request);
  const connection = await connectionFor(ar, id);
  if (!connection) throw notFound();
  return startSignIn(ar, connection);
}

export async function ssoAcs(request: Request, id: string | undefined): Promise<Response> {
  const ar = authRequest(request);
  const connection = await connectionFor(ar, id);
  if (!connection) throw notFound();
  const limited = await acsRateLimited(ar, connection);
  if (limited) return limited;
  try {
    const body = await readBody(request, ACS_BODY_LIMIT);
    return await consumeAssertion(ar, connection, body.SAMLResponse, body.RelayState);
  } catch (error) {
    if (error instanceof BadRequestError) return refusedBodyResponse(error);
    throw error;
  }
}

export async function ssoFinish(request: Request, id: string | undefined): Promise<Response> {
  const ar = authRequest(request);
  const connection = await connectionFor(ar, id);
  if (!connection) throw notFound();
  return finishSignIn(ar, connection);
}

// ── OpenID Connect connections: /sso/oidc/<connectionId>/signin and /callback (ADR 151) ──────────

export async function ssoOidcStart(request: Request, id: string | undefined): Promise<Response> {
  const ar = authRequest(request);
  const connection = await oidcConnectionFor(ar, id);
  if (!connection) throw notFound();
  return startOidcSignIn(ar, connection);
}

export async function ssoOidcCallback(request: Request, id: string | undefined): Promise<Response> {
  const ar = authRequest(request);
  const connection = await oidcConnectionFor(ar, id);
  if (!connection) throw notFound();
  return finishOidcSignIn(ar, connection);
}
