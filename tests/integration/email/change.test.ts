// Adding or changing the e-mail address from /account: a link goes to the new address, and only
// using it (GET shows a button, the POST changes) replaces the address.
import { describe, expect, it } from "vitest";
import { createSession } from "../../../app/auth/core/session.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import * as account from "../../../app/routes/account.tsx";
import * as accountEmail from "../../../app/routes/account-email.tsx";
import { dbLabel, testDb } from "../../support/db.ts";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";
import { callRoute, CookieJar, get, post } from "../../support/http.ts";
import { linkIn, refusedUrl } from "../../support/smtp-sink.ts";
import { configure, csrfFor, location, openLink, ORIGIN, requestLink, sessionOf, smtpEnv, useSmtpSink } from "./helpers.ts";
import { accountRefusal } from "../../support/account-refusal.ts";

const smtp = useSmtpSink();

/** A user and a browser signed in as them. */
async function signedIn(email: string | null, verified = true) {
  const user = await testDb().user.create({ data: { email, emailVerified: verified && email ? new Date() : null, name: "Grace" } });
  const jar = new CookieJar();
  jar.apply(await createSession(authRequest(get("/")), { id: user.id, email: user.email, name: user.name, image: null }));
  return { user, jar };
}

async function askForChange(jar: CookieJar, email: string) {
  const csrfToken = await csrfFor(jar);
  const res = await callRoute(account.action, post("/account", { csrfToken, intent: "change-email", email }, { jar }));
  jar.apply(res);
  return res;
}

type Page = { state: "confirm"; address: string; token: string; csrfToken: string } | { state: "invalid" };

async function openChangeLink(link: URL, jar = new CookieJar()) {
  const res = await callRoute(accountEmail.loader, get(link.pathname + link.search, { jar }));
  jar.apply(res);
  return { res, page: (await res.clone().json()) as Page };
}

async function pressConfirm(jar: CookieJar, page: Page & { state: "confirm" }) {
  const res = await callRoute(accountEmail.action, post("/account/email", { csrfToken: page.csrfToken, token: page.token, email: page.address }, { jar }));
  jar.apply(res);
  return res;
}

describe(`changing the e-mail address (${dbLabel})`, () => {
  it("sends a link to the new address only, and changes nothing until it is used", async () => {
    const { user, jar } = await signedIn("old@example.com");
    const res = await askForChange(jar, "  New@Example.com ");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ emailSentTo: "new@example.com" });

    const [message] = await smtp.sink.waitFor(1);
    expect(message!.envelope.to).toEqual(["new@example.com"]);
    expect(message!.subject).toBe("Confirm your new e-mail address for Vestibule");
    const link = linkIn(message!);
    expect(link.origin + link.pathname).toBe(`${ORIGIN}/account/email`);
    expect(link.searchParams.get("email")).toBe("new@example.com");
    for (const part of [message!.text!, message!.html!]) expect(part).toContain("24 hours");

    const row = await testDb().verificationToken.findFirstOrThrow();
    expect(row).toMatchObject({ identifier: "new@example.com", purpose: "change-email", userId: user.id });
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).email).toBe("old@example.com");
  });

  it("confirming in the signed-in browser changes the address and the session at once", async () => {
    const { user, jar } = await signedIn("old@example.com");
    await askForChange(jar, "new@example.com");
    const { page } = await openChangeLink(linkIn((await smtp.sink.waitFor(1))[0]!), jar);
    expect(page).toMatchObject({ state: "confirm", address: "new@example.com" });
    // Opening the page changed nothing.
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).email).toBe("old@example.com");

    const res = await pressConfirm(jar, page as Page & { state: "confirm" });
    expect(res).toHaveRedirect("/account?updated=email");
    expect(res).toHaveSessionCookie();
    expect((await sessionOf(jar))?.user.email).toBe("new@example.com");
    const after = await testDb().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(after.email).toBe("new@example.com");
    expect(after.emailVerified).toBeInstanceOf(Date);
    // The link is used up; what is left are the two notices' "This wasn't me" links (ADR 081).
    expect((await testDb().verificationToken.findMany()).map((r) => r.purpose)).toEqual(["wasnt-me:email-changed", "wasnt-me:email-changed"]);
    expect(await testDb().authEvent.count({ where: { type: "email-changed", userId: user.id } })).toBe(1);
  });

  it("confirming on a device not signed in as the owner changes nothing: it asks for the owner's sign-in, then the same button works (ADR 058)", async () => {
    const { user, jar } = await signedIn(null);
    await askForChange(jar, "added@example.com");
    const phone = new CookieJar();
    const { page } = await openChangeLink(linkIn((await smtp.sink.waitFor(1))[0]!), phone);
    const res = await pressConfirm(phone, page as Page & { state: "confirm" });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { state: string; error: string; url: string };
    expect(body).toMatchObject({ state: "reauth", error: "ReauthRequired" });
    expect(new URL(body.url).searchParams.get("callbackUrl")).toMatch(/^\/account\/email\?token=/);
    expect(res).not.toHaveSessionCookie();
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).email).toBeNull();
    // The owner signs in on the phone and presses the same button.
    phone.apply(await createSession(authRequest(get("/")), { id: user.id, email: null, name: user.name, image: null }));
    expect(await pressConfirm(phone, page as Page & { state: "confirm" })).toHaveRedirect("/account?updated=email");
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).email).toBe("added@example.com");
  });

  it("an address of another account: the request looks the same, the confirmation refuses and keeps both intact", async () => {
    await testDb().user.create({ data: { email: "taken@example.com", emailVerified: new Date() } });
    const { user, jar } = await signedIn("mine@example.com");
    const res = await askForChange(jar, "taken@example.com");
    expect(await res.json()).toMatchObject({ emailSentTo: "taken@example.com" });
    const { page } = await openChangeLink(linkIn((await smtp.sink.waitFor(1))[0]!), jar);
    const confirm = await pressConfirm(jar, page as Page & { state: "confirm" });
    expect(confirm.status).toBe(409);
    expect(await confirm.json()).toEqual({ state: "taken" });
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).email).toBe("mine@example.com");
    expect(await testDb().user.count({ where: { email: "taken@example.com" } })).toBe(1);
  });

  it("refuses bad input at the field, and the current verified address", async () => {
    const { jar } = await signedIn("me@example.com");
    for (const email of ["me@example.com,evil@example.com", '"me"@example.com', "me@localhost", "me＠example.com@evil.example"]) {
      const res = await askForChange(jar, email);
      // A browser is sent back to the page (its section), the address typed not in the URL.
      expect(res.status).toBe(303);
      expect(res.headers.get("Location")).toBe("/account?refused=emailInvalid&intent=change-email#email-change-notice");
      expect(await accountRefusal(res, jar)).toEqual({ formError: null, fieldErrors: { email: "Enter one e-mail address, such as name@example.com." } });
    }
    const same = await askForChange(jar, "ME@example.com");
    expect(await accountRefusal(same, jar)).toEqual({ formError: null, fieldErrors: { email: "That is already your e-mail address." } });
    expect(smtp.sink.messages).toHaveLength(0);
    expect(await testDb().verificationToken.count()).toBe(0);
  });

  it("the current address while unverified gets a link that verifies it", async () => {
    const { user, jar } = await signedIn("me@example.com", false);
    await askForChange(jar, "me@example.com");
    const { page } = await openChangeLink(linkIn((await smtp.sink.waitFor(1))[0]!), jar);
    expect(await pressConfirm(jar, page as Page & { state: "confirm" })).toHaveRedirect("/account?updated=email");
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).emailVerified).toBeInstanceOf(Date);
  });

  it("a used, expired or altered link shows the invalid page (403)", async () => {
    const { jar } = await signedIn("old@example.com");
    await askForChange(jar, "new@example.com");
    const link = linkIn((await smtp.sink.waitFor(1))[0]!);
    const altered = new URL(link);
    altered.searchParams.set("email", "other@example.com");
    const bad = await openChangeLink(altered);
    expect(bad.res.status).toBe(403);
    expect(bad.page).toEqual({ state: "invalid" });

    const { page } = await openChangeLink(link, jar);
    await pressConfirm(jar, page as Page & { state: "confirm" });
    expect((await openChangeLink(link)).page).toEqual({ state: "invalid" });
    const replay = await pressConfirm(jar, page as Page & { state: "confirm" });
    expect(replay.status).toBe(403);
    expect(await replay.json()).toEqual({ state: "invalid" });

    await askForChange(jar, "newer@example.com");
    const later = linkIn((await smtp.sink.waitFor(2))[1]!);
    await testDb().verificationToken.updateMany({ data: { expires: new Date(Date.now() - 1000) } });
    expect((await openChangeLink(later)).page).toEqual({ state: "invalid" });
  });

  it("the POST needs the page's CSRF token", async () => {
    const { user, jar } = await signedIn("old@example.com");
    await askForChange(jar, "new@example.com");
    const link = linkIn((await smtp.sink.waitFor(1))[0]!);
    const res = await callRoute(
      accountEmail.action,
      post("/account/email", { token: link.searchParams.get("token")!, email: "new@example.com" }, { jar: new CookieJar() }),
    );
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ state: "expired-form" });
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).email).toBe("old@example.com");
    expect(await testDb().verificationToken.count()).toBe(1);
  });

  it("sign-in links and change links are not interchangeable", async () => {
    const { user, jar } = await signedIn("old@example.com");
    await askForChange(jar, "new@example.com");
    const changeLink = linkIn((await smtp.sink.waitFor(1))[0]!);
    const asSignin = new URL(`${ORIGIN}/auth/callback/email${changeLink.search}`);
    expect(await openLink(asSignin)).toHaveErrorRedirect("Verification");

    await requestLink(new CookieJar(), { email: "visitor@example.com" });
    const signinLink = linkIn((await smtp.sink.waitFor(2))[1]!);
    const asChange = new URL(`${ORIGIN}/account/email?${new URLSearchParams({ token: signinLink.searchParams.get("token")!, email: "visitor@example.com" })}`);
    expect((await openChangeLink(asChange)).page).toEqual({ state: "invalid" });
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).email).toBe("old@example.com");
    expect(await testDb().verificationToken.count()).toBe(2);
  });

  it("ten concurrent confirmations change the address once", async () => {
    const { user, jar } = await signedIn("old@example.com");
    await askForChange(jar, "race@example.com");
    const { page } = await openChangeLink(linkIn((await smtp.sink.waitFor(1))[0]!), jar);
    const results = await Promise.all(Array.from({ length: 10 }, () => pressConfirm(jar, page as Page & { state: "confirm" })));
    expect(results.filter((r) => r.status === 302)).toHaveLength(1);
    expect(results.filter((r) => r.status === 403)).toHaveLength(9);
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).email).toBe("race@example.com");
    expect(await testDb().authEvent.count({ where: { type: "email-changed" } })).toBe(1);
  });

  it("a failed send says so at the field and keeps no token", async () => {
    const { jar } = await signedIn("old@example.com");
    configure(smtpEnv(await refusedUrl()));
    const res = await askForChange(jar, "new@example.com");
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ formError: null, fieldErrors: { email: "The e-mail could not be sent." } });
    expect(await testDb().verificationToken.count()).toBe(0);
  });

  it("is rate-limited like sign-in links (per address)", async () => {
    const { jar } = await signedIn("old@example.com");
    for (let i = 0; i < 5; i++) expect((await askForChange(jar, "target@example.com")).status).toBe(200);
    const over = await askForChange(jar, "target@example.com");
    expect(over.status).toBe(429);
    // The address's budget of e-mails, not this visitor's attempts (ADR 111), with the limit's hour.
    expect(await over.json()).toEqual({
      formError: null,
      fieldErrors: { email: "We have sent several e-mails to this address recently. Check your inbox, or try again in 60 minutes." },
    });
    expect(smtp.sink.messages.length).toBeLessThanOrEqual(5);
    await smtp.sink.waitFor(5);
  });

  it("a signed-in user's first try to change to an address whose owner asked for five sign-in links: the address's e-mails are named, never 'too many attempts', in en/de/fr/ar", async () => {
    await testDb().user.create({ data: { email: "taken@example.com", emailVerified: new Date() } });
    const owner = new CookieJar();
    for (let i = 0; i < 5; i++) expect((await requestLink(owner, { email: "taken@example.com" })).status).toBe(302);
    const { jar } = await signedIn("mover@example.com");
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const res = await runWithLocale(locale, () => askForChange(jar, "taken@example.com"));
      expect(res.status).toBe(429);
      const { fieldErrors } = (await res.json()) as { fieldErrors: { email: string } };
      const minutes = Number(/\d+/.exec(fieldErrors.email.replace(/[٠-٩]/g, (d) => String(d.charCodeAt(0) - 0x660)))?.[0] ?? 1);
      expect(fieldErrors.email).toBe(runWithLocale(locale, () => t("limit.address", { minutes })));
    }
  });

  it("needs a session; the account page offers the form", async () => {
    const res = await callRoute(account.action, post("/account", { intent: "change-email", email: "x@example.com" }));
    expect(location(res).pathname).toBe("/auth/signin");
    expect(location(res).searchParams.get("error")).toBe("SessionRequired");

    const { jar } = await signedIn("old@example.com");
    const pageRes = await callRoute(account.loader, get("/account", { jar }));
    expect(((await pageRes.json()) as { emailChange: { available: boolean } }).emailChange).toEqual({ available: true });
  });
});
