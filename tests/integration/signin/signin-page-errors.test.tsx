// The sign-in page as the server renders it: which text a refusal shows, and under which form.
import { renderToString } from "react-dom/server";
import { createRoutesStub } from "react-router";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as signinRoute from "../../../app/routes/auth/signin";
import { withEnv } from "../../support/auth";
import { resetDatabase } from "../../support/db";
import { callRoute, get } from "../../support/http";
import { runWithLocale, t } from "../../../app/i18n/t.server";

let undoEnv: (() => void) | null = null;
beforeEach(async () => {
  await resetDatabase();
  undoEnv = withEnv({ AUTH_EMAIL_SERVER: "smtp://127.0.0.1:2525", AUTH_EMAIL_FROM: "Vestibule <no-reply@example.com>" });
});
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
});

/** The page for `path`: the real loader's data, rendered by the route's own component. */
async function renderSigninPage(path: string): Promise<string> {
  const loaderData = await (await callRoute(signinRoute.loader, get(path))).json();
  const Page = signinRoute.default as unknown as (props: { loaderData: unknown }) => React.ReactNode;
  const Stub = createRoutesStub([{ path: "/auth/signin", Component: () => <Page loaderData={loaderData} /> }]);
  return renderToString(<Stub initialEntries={[path]} />);
}

/** The text of every role=alert element, tags stripped. */
function alerts(html: string): string[] {
  return [...html.matchAll(/<p[^>]*role="alert"[^>]*>([\s\S]*?)<\/p>/g)].map((m) => m[1]!.replace(/<!--.*?-->/g, "").replace(/&#x27;/g, "'"));
}

describe("GET /auth/signin?error=RateLimited", () => {
  it("shows the one text with the minutes, and nothing else", async () => {
    const html = await renderSigninPage("/auth/signin?error=RateLimited&minutes=15");
    expect(alerts(html)).toEqual(["Too many attempts. Try again in 15 minutes."]);
    expect(html).not.toContain("Try again later");
  });

  it("says 1 minute in the singular", async () => {
    expect(alerts(await renderSigninPage("/auth/signin?error=RateLimited&minutes=1"))).toEqual(["Too many attempts. Try again in 1 minute."]);
  });

  it("without a usable number, says to try again later", async () => {
    expect(alerts(await renderSigninPage("/auth/signin?error=RateLimited&minutes=x"))).toEqual(["Too many attempts. Try again later."]);
  });
});

describe("GET /auth/signin?error=RateLimited&limit=<kind> (ADR 111)", () => {
  it("a visitor whose address had several e-mails sent reads that, in en/de/fr/ar, never 'too many attempts'", async () => {
    const expected = {
      en: "We have sent several e-mails to this address recently. Check your inbox, or try again in 52 minutes.",
      de: "Wir haben in letzter Zeit mehrere E-Mails an diese Adresse gesendet. Sehen Sie in Ihrem Posteingang nach, oder versuchen Sie es in 52 Minuten erneut.",
      fr: "Nous avons envoyé plusieurs e-mails à cette adresse récemment. Consultez votre boîte de réception, ou réessayez dans 52 minutes.",
    };
    for (const [locale, text] of Object.entries(expected)) {
      const html = await runWithLocale(locale as "en", () => renderSigninPage("/auth/signin?error=RateLimited&minutes=52&limit=address"));
      expect(alerts(html).map((a) => a.replace(/&#x2019;|’/g, "’"))).toEqual([text]);
    }
    const arabic = alerts(await runWithLocale("ar", () => renderSigninPage("/auth/signin?error=RateLimited&minutes=52&limit=address")));
    expect(arabic).toEqual([runWithLocale("ar", () => t("limit.address", { minutes: 52 }))]);
    expect(arabic[0]).not.toContain(runWithLocale("ar", () => t("error.RateLimited", { minutes: 52 })).split(".")[0]);
  });

  it("the account's failed attempts by anyone and the network's requests have their own words; an unknown kind is the visitor's own", async () => {
    expect(alerts(await renderSigninPage("/auth/signin?error=RateLimited&minutes=3&limit=account"))).toEqual([
      "There have been several failed attempts to sign in with this address recently, so it is paused for a while. Try again in 3 minutes, or use another way to sign in.",
    ]);
    expect(alerts(await renderSigninPage("/auth/signin?error=RateLimited&minutes=3&limit=network"))).toEqual([
      "Many requests have come from your network recently. Try again in 3 minutes.",
    ]);
    expect(alerts(await renderSigninPage("/auth/signin?error=RateLimited&minutes=3&limit=bogus"))).toEqual(["Too many attempts. Try again in 3 minutes."]);
  });
});
