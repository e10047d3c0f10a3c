// Fixed-window rate limits kept in the database, so every instance sharing a PostgreSQL
// database counts the same hits.
import { db } from "../../db/client.server";

export type RateLimitRule = { bucket: string; limit: number; windowSeconds: number };

export const RATE_LIMITS = {
  credentials: { bucket: "credentials", limit: 10, windowSeconds: 15 * 60 },
  credentialsClient: { bucket: "credentials-client", limit: 50, windowSeconds: 15 * 60 },
  emailAddress: { bucket: "email-address", limit: 5, windowSeconds: 60 * 60 },
  emailClient: { bucket: "email-client", limit: 20, windowSeconds: 60 * 60 },
  clientLog: { bucket: "client-log", limit: 60, windowSeconds: 60 },
} satisfies Record<string, RateLimitRule>;

/** Counts one hit for `subject`; true while the count stays within the rule's limit. */
export async function hitRateLimit(rule: RateLimitRule, subject: string, now = new Date()): Promise<boolean> {
  const key = `${rule.bucket}:${subject}`.slice(0, 512);
  const windowStart = new Date(now.getTime() - rule.windowSeconds * 1000);
  const client = db();
  await client.rateLimit.updateMany({ where: { key, windowStart: { lt: windowStart } }, data: { count: 0, windowStart: now } });
  for (let attempt = 0; ; attempt++) {
    try {
      const row = await client.rateLimit.upsert({
        where: { key },
        create: { key, count: 1, windowStart: now },
        update: { count: { increment: 1 } },
      });
      return row.count <= rule.limit;
    } catch (error) {
      // Two first hits racing on the insert: the loser retries as an update.
      if (attempt < 2 && (error as { code?: string }).code === "P2002") continue;
      throw error;
    }
  }
}

/**
 * A sign-in attempt's two limits: the client's budget first, then the subject's (an e-mail
 * address). In that order a client over its own budget stops charging the addresses it names, so
 * it cannot lock other people out. Without a known client address only the subject counts.
 */
export async function withinSignInLimits(
  limits: { client: RateLimitRule; subject: RateLimitRule },
  client: string | null,
  subject: string,
): Promise<boolean> {
  if (client !== null && !(await hitRateLimit(limits.client, client))) return false;
  return hitRateLimit(limits.subject, subject);
}
