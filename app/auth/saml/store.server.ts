// The two tables that make SAML safe on several instances (ADR 154): the AuthnRequests we sent and
// not yet answered (node-saml's InResponseTo cache, in the database), and every assertion id we
// accepted, until the assertion expires (a second use is a replay, on any instance).
import type { CacheItem, CacheProvider } from "@node-saml/node-saml";
import { db } from "../../db/client.server";

/** How long an AuthnRequest may wait for its answer. */
export const SAML_REQUEST_MAX_AGE_MS = 10 * 60_000;

/** A CacheProvider for one connection: the SamlRequest rows of that connection only. */
export function requestCache(connectionId: string): CacheProvider {
  return {
    // node-saml saves when it builds the AuthnRequest; our start records the row itself (with the
    // signed-in user and the return address), so this only refreshes nothing.
    async saveAsync(key: string, value: string): Promise<CacheItem | null> {
      return { value, createdAt: Date.now() };
    },
    async getAsync(key: string): Promise<string | null> {
      const row = await db().samlRequest.findUnique({ where: { id: key } });
      if (!row || row.connectionId !== connectionId || row.expires.getTime() <= Date.now()) return null;
      return new Date(row.expires.getTime() - SAML_REQUEST_MAX_AGE_MS).toISOString();
    },
    async removeAsync(key: string | null): Promise<string | null> {
      if (!key) return null;
      await db().samlRequest.deleteMany({ where: { id: key, connectionId } });
      return key;
    },
  };
}

export type StoredRequest = { id: string; connectionId: string; userId: string | null; callbackUrl: string; bindingHash: string | null };

export async function recordRequest(request: StoredRequest, now = new Date()): Promise<void> {
  await db().samlRequest.create({ data: { ...request, expires: new Date(now.getTime() + SAML_REQUEST_MAX_AGE_MS) } });
}

/** The request a response answers, when it is this connection's and still waiting. */
export async function findRequest(id: string, connectionId: string, now = new Date()): Promise<StoredRequest | null> {
  const row = await db().samlRequest.findUnique({ where: { id } });
  if (!row || row.connectionId !== connectionId || row.expires <= now) return null;
  return { id: row.id, connectionId: row.connectionId, userId: row.userId, callbackUrl: row.callbackUrl, bindingHash: row.bindingHash };
}

/** How long the ACS's ticket waits for the browser's finish step (ADR 154, amended): one redirect's time. */
export const SAML_TICKET_MAX_AGE_MS = 2 * 60_000;

export type TicketPerson = { subject: string; email: string | null; name: string | null };
export type Ticket = { requestId: string; bindingHash: string; userId: string | null; callbackUrl: string; person: TicketPerson };

/** Stores an answered request's outcome under the hash of `ticket` (the finish URL's value). */
export async function recordTicket(ticketHash: string, connectionId: string, ticket: Ticket, now = new Date()): Promise<void> {
  await db().samlTicket.create({
    data: { id: ticketHash, connectionId, requestId: ticket.requestId, bindingHash: ticket.bindingHash, userId: ticket.userId, callbackUrl: ticket.callbackUrl, person: JSON.stringify(ticket.person), expires: new Date(now.getTime() + SAML_TICKET_MAX_AGE_MS) },
  });
}

/**
 * Takes the ticket: the first reader (on any instance) deletes the row and gets it, every later
 * one gets null, as does an expired ticket or another connection's.
 */
export async function takeTicket(ticketHash: string, connectionId: string, now = new Date()): Promise<Ticket | null> {
  const row = await db().samlTicket.findUnique({ where: { id: ticketHash } });
  if (!row || row.connectionId !== connectionId) return null;
  const { count } = await db().samlTicket.deleteMany({ where: { id: ticketHash, connectionId, expires: { gt: now } } });
  if (count !== 1) return null;
  return { requestId: row.requestId, bindingHash: row.bindingHash, userId: row.userId, callbackUrl: row.callbackUrl, person: JSON.parse(row.person) as TicketPerson };
}

/**
 * Marks an assertion id used until `expires`: true the first time, false for a replay (the
 * primary key refuses the second insert, whichever instance makes it).
 */
export async function useAssertionOnce(id: string, connectionId: string, expires: Date): Promise<boolean> {
  try {
    await db().samlAssertionUse.create({ data: { id: `${connectionId}:${id}`, connectionId, expires } });
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "P2002") return false;
    throw error;
  }
}
