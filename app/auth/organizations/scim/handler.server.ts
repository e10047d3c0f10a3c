// The /scim/v2 endpoint (docs/features/scim.md): the bearer token names the organization, the
// path names the resource, and every answer is application/scim+json — a resource, a list, 204, or
// a SCIM error (RFC 7644 section 3.12). Off (404, like any unknown URL) unless organizations are on.
import { getConfig } from "../../core/config.server";
import { BadRequestError, readJsonDocument } from "../../core/body.server";
import { authRequest, clientAddress } from "../../core/request.server";
import { organizationOfToken } from "./tokens.server";
import * as scim from "./service.server";

const SCIM_TYPE = "application/scim+json";

function scimAnswer(status: number, body?: unknown, extra: Record<string, string> = {}): Response {
  const headers = new Headers({ "Cache-Control": "no-store", ...extra });
  if (body === undefined) return new Response(null, { status, headers });
  headers.set("Content-Type", `${SCIM_TYPE}; charset=utf-8`);
  return new Response(JSON.stringify(body), { status, headers });
}

function errorAnswer(status: number, scimType: string | undefined, detail: string, extra: Record<string, string> = {}): Response {
  const body: Record<string, unknown> = { schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: String(status), detail };
  if (scimType) body.scimType = scimType;
  return scimAnswer(status, body, extra);
}

async function bodyOf(request: Request): Promise<unknown> {
  try {
    return await readJsonDocument(request, [SCIM_TYPE, "application/json"], scim.SCIM_MAX_BODY);
  } catch (error) {
    if (error instanceof BadRequestError) throw new scim.ScimError(error.status, error.status === 400 ? "invalidSyntax" : undefined, error.message);
    throw error;
  }
}

/** Answers one SCIM request; `path` is what follows /scim/v2/ (say `Users/abc`). */
export async function handleScim(request: Request, path: string): Promise<Response> {
  if (!getConfig().organizations) return new Response("Not found", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8" } });
  const token = await organizationOfToken(request.headers.get("Authorization"));
  if (!token) return errorAnswer(401, undefined, "A valid provisioning token is required", { "WWW-Authenticate": 'Bearer realm="scim"' });
  const ar = authRequest(request);
  const ctx: scim.ScimContext = { organizationId: token.organizationId, tokenId: token.tokenId, actor: { userId: null, email: `scim:${token.tokenId}`, ip: clientAddress(ar) } };
  const url = new URL(request.url);
  const [resource = "", id, extra] = path.split("/").filter(Boolean).map(decodeURIComponent);
  const method = request.method.toUpperCase();
  try {
    if (extra !== undefined) throw new scim.ScimError(404, undefined, "Resource not found");
    switch (resource) {
      case "ServiceProviderConfig":
        if (method !== "GET" || id) break;
        return scimAnswer(200, await scim.serviceProviderConfig());
      case "ResourceTypes":
        if (method !== "GET") break;
        return scimAnswer(200, await scim.resourceTypes(id));
      case "Schemas":
        if (method !== "GET") break;
        return scimAnswer(200, await scim.schemas(id));
      case "Users":
        if (!id && method === "GET") return scimAnswer(200, await scim.listUsers(ctx, url));
        if (!id && method === "POST") return scimAnswer(201, await scim.createUser(ctx, await bodyOf(request)));
        if (!id) break;
        if (method === "GET") return scimAnswer(200, await scim.getUser(ctx, id));
        if (method === "PUT") return scimAnswer(200, await scim.replaceUser(ctx, id, await bodyOf(request)));
        if (method === "PATCH") return scimAnswer(200, await scim.patchUser(ctx, id, await bodyOf(request)));
        if (method === "DELETE") return (await scim.deleteUser(ctx, id), scimAnswer(204));
        break;
      case "Groups":
        if (!id && method === "GET") return scimAnswer(200, await scim.listGroups(ctx, url));
        if (!id && method === "POST") return scimAnswer(201, await scim.createGroup(ctx, await bodyOf(request)));
        if (!id) break;
        if (method === "GET") return scimAnswer(200, await scim.getGroup(ctx, id, url));
        if (method === "PUT") return scimAnswer(200, await scim.replaceGroup(ctx, id, await bodyOf(request)));
        if (method === "PATCH") return scimAnswer(200, await scim.patchGroup(ctx, id, await bodyOf(request)));
        if (method === "DELETE") return (await scim.deleteGroup(ctx, id), scimAnswer(204));
        break;
      default:
        return errorAnswer(404, undefined, "Resource not found");
    }
    return errorAnswer(405, undefined, "Method not allowed");
  } catch (error) {
    if (error instanceof scim.ScimError) return errorAnswer(error.status, error.scimType, error.message);
    throw error;
  }
}
