// Development start-up: every sign-in method works offline on a fresh clone.
import { getConfig } from "../auth/core/config.server";
import { upsertCredentialsUser } from "../auth/credentials/users.server";
import { assertEngineSafe } from "../auth/provider/engine.server";
import { db } from "../db/client.server";
import { DEFAULT_LOCALE, isLocale, type Locale } from "../i18n/languages.server";
import { rememberLocale } from "../i18n/user-locale.server";
import { migrate } from "../db/migrate.server";
import { idpDevStep } from "./idp-step.server";
import { providerCallbackLines } from "./provider-callbacks.server";
import { mailDevStep } from "../mail/dev-step.server";
import { mailLook } from "../theme.server";

export const DEMO_USER = { email: "demo@vestibule.dev", password: "vestibule-demo", name: "Demo User" } as const;

/** Each step registers what it starts; steps added by other modules run after the database is ready. */
export const devSteps: ((print: (line: string) => void) => Promise<void>)[] = [];
devSteps.push(idpDevStep);
devSteps.push(mailDevStep);

/**
 * The demo user, once, with a language of its own: an account made by a sign-up keeps its
 * browser's language, and one with none is written to in English (ADR 108), so the demo user
 * takes the language of the machine the developer runs (its default locale, e.g. "ar-EG" from
 * LANG=ar_EG.UTF-8, when the site speaks it; else English). Another is picked in the menu.
 */
export async function seedDemoUser(machineTag = Intl.DateTimeFormat().resolvedOptions().locale): Promise<void> {
  const existing = await db().user.findUnique({ where: { email: DEMO_USER.email }, select: { id: true, locale: true } });
  const id = existing?.id ?? (await upsertCredentialsUser(DEMO_USER)).user.id;
  if (!existing?.locale) await rememberLocale(id, machineLocale(machineTag));
}

/** The site's language a locale tag names ("ar-EG", "fr_FR.UTF-8" → ar, fr), else English. */
export function machineLocale(tag: string): Locale {
  const primary = tag.split(/[_.@-]/)[0]!.toLowerCase();
  return isLocale(primary) ? primary : DEFAULT_LOCALE;
}

let started: Promise<void> | null = null;

/** `origin`: where the dev server listens (the callback URLs' origin unless AUTH_URL is set). */
export function bootstrapDev(print: (line: string) => void, origin = "http://localhost:5173") {
  started ??= (async () => {
    const config = getConfig();
    // The e-mails' look from app/theme.css: a property missing stops the start naming it (ADR 126).
    mailLook();
    const { applied } = await migrate({ log: () => {} });
    print(`[vestibule] database: ${config.databaseUrl ? "PostgreSQL (DATABASE_URL)" : `SQLite ${config.dataDir}/vestibule.db`}${applied.length ? `, applied ${applied.length} migration(s)` : ""}`);
    if (config.credentials) {
      await seedDemoUser();
      print(`[vestibule] demo user: ${DEMO_USER.email} / password: ${DEMO_USER.password}`);
    }
    for (const step of devSteps) await step(print);
    const callbacks = providerCallbackLines(getConfig(), origin);
    if (callbacks.length) print(`[vestibule] sign-in providers and the callback URL to register at each:\n${callbacks.join("\n")}`);
    // The OAuth provider never runs with the library's development shortcuts (ADR 133).
    await assertEngineSafe();
    if (config.provider) print(`[vestibule] OAuth provider on: issuer ${config.provider.issuer}`);
    print(`[vestibule] session strategy: ${config.sessionStrategy}; sign in at /auth/signin`);
  })();
  return started;
}
