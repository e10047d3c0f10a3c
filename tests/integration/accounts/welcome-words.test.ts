// The welcome page after the sign-in that created the account: its words follow the new user's
// real ways in — the passkey offer names what a passkey would replace for her, and the page offers
// to add a name only to a user who has none — in every language.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { getProviders } from "../../../app/auth/signin/registry.server.ts";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";
import * as welcome from "../../../app/routes/welcome.tsx";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get } from "../../support/http.ts";
import { ALICE, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { signInThroughIdp } from "../../support/oauth-flow.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { configure, openLink, smtpEnv } from "../email/helpers.ts";
import { startSmtpSink, type SmtpSink } from "../../support/smtp-sink.ts";
import { signUp } from "../passwords/helpers.ts";

let idp: TestIdp;
let sink: SmtpSink;
beforeAll(async () => {
  [idp, sink] = await Promise.all([startTestIdp(), startSmtpSink()]);
});
afterAll(async () => {
  await idp?.stop();
  await sink?.close();
});
beforeEach(async () => {
  await resetDatabase();
  sink.clear();
});

type Words = { manage: string; passkeyText: string };
const wordsOf = async (jar: CookieJar, locale: "en" | "de" | "fr" | "ar") =>
  ((await (await runWithLocale(locale, () => callRoute(welcome.loader, get("/welcome", { jar })))).json()) as { words: Words }).words;

describe(`the welcome page's words (${dbLabel})`, () => {
  it("says the account was created only right after it was: a later visit to /welcome reads the next steps alone", async () => {
    idp.configure();
    const jar = new CookieJar();
    await signInThroughIdp(jar, ALICE);
    const justCreated = async () => ((await (await callRoute(welcome.loader, get("/welcome", { jar }))).json()) as { justCreated: boolean }).justCreated;
    expect(await justCreated()).toBe(true);
    await testDb().user.updateMany({ data: { createdAt: new Date(Date.now() - 24 * 3600 * 1000) } });
    expect(await justCreated()).toBe(false);
  });

  it("a new user who came in through the OpenID provider alone is offered a passkey instead of that provider — not 'an e-mail link or password' — in en/de/fr/ar", async () => {
    idp.configure();
    const jar = new CookieJar();
    await signInThroughIdp(jar, ALICE);
    const name = getProviders(getConfig()).find((p) => p.id === "oidc")!.name;
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const words = await wordsOf(jar, locale);
      expect(words.passkeyText).toBe(runWithLocale(locale, () => t("welcome.passkeyInsteadOfProvider", { provider: name })));
    }
  });

  it("a new user who signed up with a password and a name is offered a passkey instead of her password, and to change (not add) her name, in en/de/fr/ar", async () => {
    configure(smtpEnv(sink.url));
    const asking = new CookieJar();
    await signUp(asking, { email: "nova@example.com", password: "a long and quiet harbour at dawn", name: "Nova" });
    const link = linkIn((await sink.waitFor(1))[0]!);
    await openLink(link, asking);
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const words = await wordsOf(asking, locale);
      runWithLocale(locale, () => {
        expect(words.passkeyText).toBe(t("welcome.passkeyInsteadOfPassword"));
        expect(words.manage).toBe(t("welcome.manageNamed"));
      });
    }
  });
});
