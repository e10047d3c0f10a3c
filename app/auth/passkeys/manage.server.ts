// A user's passkeys as /account shows them, and renaming one. Removing one is removing a way to
// sign in, which has its one atomic rule (accounts/methods.server.ts, ADR 026), reached through
// signin/methods.server.ts's removePasskey.
import { z } from "zod";
import { db } from "../../db/client.server";
import { idField } from "../core/ids";
import { nameField } from "../core/display-text";
import { nameRefusalMessage } from "../core/messages.server";
import { t } from "../../i18n/t.server";

export const MAX_PASSKEY_NAME = 60;

export const PasskeyRename = z.object({
  passkeyId: idField(),
  // The one name rule (core/display-text.ts), worded when it refuses, in that request's language.
  name: nameField(MAX_PASSKEY_NAME, (refusal) => nameRefusalMessage(refusal, "passkey.nameEmpty")),
});

export const PasskeyRemove = z.object({ passkeyId: idField() });

export type PasskeyListItem = {
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  deviceType: string;
  backedUp: boolean;
};

export function listPasskeys(userId: string): Promise<PasskeyListItem[]> {
  return db().passkey.findMany({
    where: { userId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { id: true, name: true, createdAt: true, lastUsedAt: true, deviceType: true, backedUp: true },
  });
}

/** Renames one of the user's passkeys; false when the user has no passkey of that id. */
export async function renamePasskey(userId: string, passkeyId: string, name: string): Promise<boolean> {
  const { count } = await db().passkey.updateMany({ where: { id: passkeyId, userId }, data: { name } });
  return count === 1;
}
