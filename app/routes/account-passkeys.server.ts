// The /account page's passkeys: the list (name, created, last used, device type / backed up), the
// offer to add one right after a sign-in, and the `passkey-rename` / `passkey-remove` intents.
// Removing one goes through the atomic "remove a way to sign in" rule (ADR 026): the last way in
// is refused.
import { data, redirect } from "react-router";
import { ACCOUNT_SECTION, accountAt } from "~/components/account-sections";
import { eventSource, recordEvent } from "~/auth/accounts";
import { reauthUrl, type AuthRequest } from "~/auth/core";
import { t } from "~/i18n/t.server";
import { listPasskeys, MAX_PASSKEY_NAME, PasskeyRemove, PasskeyRename, renamePasskey } from "~/auth/passkeys";
import { getProviders, removePasskey } from "~/auth/signin";
import type { CurrentSession } from "~/auth/core/session.server";
import { signedOutByRemoval } from "./account-removal.server";

export type PasskeysData = {
  enabled: boolean;
  maxName: number;
  passkeys: { id: string; name: string; createdAt: string; lastUsedAt: string | null; deviceType: string; backedUp: boolean }[];
  /** Offer "Add a passkey for next time" (no passkey yet, and this session signed in moments ago). */
  offer: boolean;
  /** Adding a passkey needs a recent sign-in first (ADR 042, 058): the section links to the sign-in page instead. */
  signInAgain: boolean;
  /** Where the section sends the owner to sign in again. */
  signInAgainUrl: string;
  notice: string | null;
};

/** `recent`: this session signed in within the recent sign-in window (ADR 058). */
export async function passkeysData(ar: AuthRequest, userId: string, recent: boolean): Promise<PasskeysData> {
  const enabled = getProviders(ar.config).some((p) => p.type === "webauthn");
  const passkeys = await listPasskeys(userId);
  const updated = ar.url.searchParams.get("updated");
  return {
    enabled,
    maxName: MAX_PASSKEY_NAME,
    passkeys: passkeys.map((p) => ({
      id: p.id,
      name: p.name,
      createdAt: p.createdAt.toISOString(),
      lastUsedAt: p.lastUsedAt?.toISOString() ?? null,
      deviceType: p.deviceType,
      backedUp: p.backedUp,
    })),
    offer: enabled && passkeys.length === 0 && recent,
    signInAgain: enabled && !recent,
    signInAgainUrl: reauthUrl(ar, accountAt(ACCOUNT_SECTION.passkeys)),
    notice:
      updated === "passkey-added"
        ? t("passkey.added")
        : updated === "passkey-renamed"
          ? t("passkey.renamed")
          : updated === "passkey-removed"
            ? t("passkey.removed")
            : null,
  };
}

const unknownRequest = () => data({ formError: t("common.unknownRequest"), fieldErrors: {} }, { status: 400 });

export async function passkeyIntent(ar: AuthRequest, session: CurrentSession, body: Record<string, unknown>) {
  const userId = session.userId;
  if (body.intent === "passkey-rename") {
    const parsed = PasskeyRename.safeParse(body);
    if (!parsed.success) {
      const nameIssue = parsed.error.issues.find((i) => i.path[0] === "name");
      if (!nameIssue || parsed.error.issues.some((i) => i.path[0] === "passkeyId")) return unknownRequest();
      return data(
        { formError: null, fieldErrors: { passkeyName: nameIssue.message, passkeyId: typeof body.passkeyId === "string" ? body.passkeyId : "" } },
        { status: 400 },
      );
    }
    if (!(await renamePasskey(userId, parsed.data.passkeyId, parsed.data.name))) {
      return data({ formError: t("passkey.notFound"), fieldErrors: {} }, { status: 404 });
    }
    await recordEvent("passkey-renamed", { userId, ...eventSource(ar), detail: { provider: "passkey" } });
    throw redirect(accountAt(ACCOUNT_SECTION.passkeys, { updated: "passkey-renamed" }));
  }
  const parsed = PasskeyRemove.safeParse(body);
  if (!parsed.success) return unknownRequest();
  const { result, endedSessions } = await removePasskey(ar, userId, parsed.data.passkeyId);
  if (result === "last-method") return data({ formError: t("passkey.lastMethod"), fieldErrors: {} }, { status: 409 });
  if (result === "not-found") return data({ formError: t("passkey.notFound"), fieldErrors: {} }, { status: 404 });
  // This session was started with that passkey: it ended with the others.
  if (session.sessionId && endedSessions.includes(session.sessionId)) await signedOutByRemoval(ar);
  throw redirect(accountAt(ACCOUNT_SECTION.passkeys, { updated: "passkey-removed" }));
}
