// Sign-up pre-hijack: an attacker signs up the victim's address with HIS
// password; the victim signs up too and opens the first of the two e-mails — his. A sign-up link
// finishes with the password typed at sign-up only in the browser that asked (its authjs.email-code
// cookie names the request); anywhere else it verifies the address and asks for a password to be
// chosen there. Whoever did not read the mailbox never gets in; whoever did always does.
import { describe, expect, it } from "vitest";
import { verifyPassword } from "../../../app/auth/credentials/password.server.ts";
import * as callbackEmail from "../../../app/routes/auth/callback-email.tsx";
import { signIn } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, post } from "../../support/http.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { configure, csrfFor, openLink, ORIGIN, sessionOf, smtpEnv, useSmtpSink } from "../email/helpers.ts";
import { signUp } from "./helpers.ts";

const smtp = useSmtpSink();
const ATTACKERS = "attacker chosen phrase";
const HERS = "velvet lantern orbit";
const CHOSEN_ON_PHONE = "quiet harbour compass";

async function signedUp(jar: CookieJar, password: string, name: string) {
  const before = smtp.sink.messages.length;
  expect((await signUp(jar, { email: "victim@example.com", password, name, callbackUrl: "/account" })).status).toBe(302);
  return (await smtp.sink.waitFor(before + 1)).at(-1)!;
}

async function choosePassword(jar: CookieJar, link: URL, password: string | null, extra: Record<string, string> = {}) {
  const body: Record<string, string> = { csrfToken: await csrfFor(jar), token: link.searchParams.get("token")!, email: link.searchParams.get("email")!, callbackUrl: link.searchParams.get("callbackUrl")!, ...extra };
  if (password !== null) body.password = password;
  const res = await callRoute(callbackEmail.action, post("/auth/callback/email", body, { jar }));
  jar.apply(res);
  return res;
}

const hashOf = async () => (await testDb().user.findUniqueOrThrow({ where: { email: "victim@example.com" }, include: { password: true } })).password!.hash;

describe(`sign-up links opened in another browser (${dbLabel})`, () => {
  it("the victim who opens the attacker's sign-up link in her browser is never signed in with his password: she is asked to choose one", async () => {
    const attacker = new CookieJar();
    const victim = new CookieJar();
    const his = await signedUp(attacker, ATTACKERS, "Mallory");
    const hers = await signedUp(victim, HERS, "Vera");
    expect(his.subject).toBe(hers.subject);

    const opened = await openLink(linkIn(his), victim);
    expect(opened.status).toBe(200);
    const page = (await opened.json()) as { choosePassword?: { address: string } };
    expect(page.choosePassword).toMatchObject({ address: "victim@example.com" });
    expect(opened).not.toHaveSessionCookie();
    expect(await testDb().user.count()).toBe(0);

    const res = await choosePassword(victim, linkIn(his), CHOSEN_ON_PHONE);
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect(await verifyPassword(await hashOf(), CHOSEN_ON_PHONE)).toBe(true);
    expect(await verifyPassword(await hashOf(), ATTACKERS)).toBe(false);
    expect((await signIn(new CookieJar(), "victim@example.com", ATTACKERS)).res).toHaveErrorRedirect("CredentialsSignin");
    // The attacker, who never read the mailbox, has nothing: his code cookie names a request that is gone.
    expect(await sessionOf(attacker)).toBeNull();
  });

  it("the honest user who opens her own link on her phone gets in by choosing a password there; a refused one uses nothing up", async () => {
    const laptop = new CookieJar();
    const message = await signedUp(laptop, HERS, "Vera");
    const phone = new CookieJar();
    expect(((await (await openLink(linkIn(message), phone)).json()) as { choosePassword?: unknown }).choosePassword).toBeTruthy();
    const weak = await choosePassword(phone, linkIn(message), "passwordpassword");
    expect(weak.status).toBe(400);
    expect(JSON.stringify(await weak.json())).toMatch(/too common/);
    const missing = await choosePassword(phone, linkIn(message), null);
    expect(missing.status).toBe(400);
    expect(await testDb().verificationToken.count()).toBe(1);
    const res = await choosePassword(phone, linkIn(message), CHOSEN_ON_PHONE);
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect(res).toHaveSessionCookie();
    const user = await testDb().user.findUniqueOrThrow({ where: { email: "victim@example.com" } });
    expect(user.emailVerified).not.toBeNull();
    expect(user.name).toBe("Vera");
    expect((await signIn(new CookieJar(), "victim@example.com", CHOSEN_ON_PHONE)).res).toHaveSessionCookie();
  });

  it("in the browser that asked, the link finishes with the password typed at sign-up, as before", async () => {
    const jar = new CookieJar();
    const message = await signedUp(jar, HERS, "Vera");
    expect(await openLink(linkIn(message), jar)).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect(await verifyPassword(await hashOf(), HERS)).toBe(true);
  });

  it("the sign-up link posted from another browser without a password (the confirm button) signs nobody in and uses nothing up", async () => {
    const message = await signedUp(new CookieJar(), ATTACKERS, "Mallory");
    const other = new CookieJar();
    const res = await choosePassword(other, linkIn(message), null);
    expect(res.status).toBe(400);
    expect(res).not.toHaveSessionCookie();
    expect(await testDb().user.count()).toBe(0);
    expect(await testDb().verificationToken.count()).toBe(1);
  });

  it("AUTH_EMAIL_CONFIRM=true: the honest user who opens her sign-up link in the browser that asked gets the button, and it finishes with her password", async () => {
    configure(smtpEnv(smtp.sink.url, { AUTH_EMAIL_CONFIRM: "true" }));
    const jar = new CookieJar();
    const message = await signedUp(jar, HERS, "Vera");
    // A mail scanner's GET, and hers, use nothing up.
    expect((await openLink(linkIn(message))).status).toBe(200);
    const opened = await openLink(linkIn(message), jar);
    expect(opened.status).toBe(200);
    expect(opened).not.toHaveSessionCookie();
    const page = (await opened.json()) as { address: string; token: string; callbackUrl: string; csrfToken: string };
    expect(page).toMatchObject({ address: "victim@example.com", token: linkIn(message).searchParams.get("token"), callbackUrl: "/account" });
    expect(await testDb().verificationToken.count()).toBe(1);
    const res = await callRoute(callbackEmail.action, post("/auth/callback/email", { csrfToken: page.csrfToken, token: page.token, email: page.address, callbackUrl: page.callbackUrl }, { jar }));
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect(res).toHaveSessionCookie();
    expect(await verifyPassword(await hashOf(), HERS)).toBe(true);
  });

  it("AUTH_EMAIL_CONFIRM=true: the victim who opens the attacker's sign-up link is asked to choose a password, not shown a button", async () => {
    configure(smtpEnv(smtp.sink.url, { AUTH_EMAIL_CONFIRM: "true" }));
    const his = await signedUp(new CookieJar(), ATTACKERS, "Mallory");
    const victim = new CookieJar();
    await signedUp(victim, HERS, "Vera");
    const page = (await (await openLink(linkIn(his), victim)).json()) as { choosePassword?: { address: string } };
    expect(page.choosePassword).toMatchObject({ address: "victim@example.com" });
  });
});

// Issue 31 item 18: with AUTH_EMAIL_CODE=false there is no code, and the sign-up used to set no
// cookie naming its request, so even the browser that signed up was asked for a password again.
// The answer to a sign-up now binds that browser all the same (authjs.email-code naming the
// request, no code, as long as the link lives); any other browser still proves a password.
describe(`sign-up links with AUTH_EMAIL_CODE=false (${dbLabel})`, () => {
  const codesOff = () => configure(smtpEnv(smtp.sink.url, { AUTH_EMAIL_CODE: "false" }));

  it("the browser that signed up opens its link and is signed in with the password typed at sign-up, not asked again", async () => {
    codesOff();
    const jar = new CookieJar();
    const message = await signedUp(jar, HERS, "Vera");
    expect(message.text).not.toMatch(/\b\d{6}\b/);
    const opened = await openLink(linkIn(message), jar);
    expect(opened).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect(opened).toHaveSessionCookie();
    expect(await verifyPassword(await hashOf(), HERS)).toBe(true);
  });

  it("another browser opening the link is asked to choose a password, as before", async () => {
    codesOff();
    const message = await signedUp(new CookieJar(), HERS, "Vera");
    const phone = new CookieJar();
    const opened = await openLink(linkIn(message), phone);
    expect(opened.status).toBe(200);
    expect(((await opened.json()) as { choosePassword?: { address: string } }).choosePassword).toMatchObject({ address: "victim@example.com" });
    expect(opened).not.toHaveSessionCookie();
    const res = await choosePassword(phone, linkIn(message), CHOSEN_ON_PHONE);
    expect(res).toHaveSessionCookie();
    expect(await verifyPassword(await hashOf(), CHOSEN_ON_PHONE)).toBe(true);
  });

  it("a thief with the link but not the sign-up browser's cookie must give a password: without one, nothing is signed in or used up", async () => {
    codesOff();
    const message = await signedUp(new CookieJar(), HERS, "Vera");
    const thief = new CookieJar();
    expect(((await (await openLink(linkIn(message), thief)).json()) as { choosePassword?: unknown }).choosePassword).toBeTruthy();
    const res = await choosePassword(thief, linkIn(message), null);
    expect(res.status).toBe(400);
    expect(res).not.toHaveSessionCookie();
    expect(await testDb().user.count()).toBe(0);
    expect(await testDb().verificationToken.count()).toBe(1);
  });

  it("the victim who opens the attacker's sign-up link in her own browser is asked to choose a password: her cookie names her sign-up, not his", async () => {
    codesOff();
    const his = await signedUp(new CookieJar(), ATTACKERS, "Mallory");
    const victim = new CookieJar();
    await signedUp(victim, HERS, "Vera");
    const opened = await openLink(linkIn(his), victim);
    expect(((await opened.json()) as { choosePassword?: { address: string } }).choosePassword).toMatchObject({ address: "victim@example.com" });
    expect(opened).not.toHaveSessionCookie();
  });

  it("a sign-up for an address that has an account answers with the same cookies as one for a new address", async () => {
    codesOff();
    const names = (res: Response) => res.headers.getSetCookie().map((c) => c.slice(0, c.indexOf("="))).sort();
    const fresh = await signUp(new CookieJar(), { email: "new@example.com", password: HERS, name: "Vera", callbackUrl: "/account" });
    await signUp(new CookieJar(), { email: "taken@example.com", password: HERS, name: "Vera", callbackUrl: "/account" });
    await smtp.sink.waitFor(2);
    const link = linkIn(smtp.sink.messages.find((m) => m.envelope.to.includes("taken@example.com"))!);
    await openLink(link, new CookieJar());
    const taken = await signUp(new CookieJar(), { email: "taken@example.com", password: HERS, name: "Vera", callbackUrl: "/account" });
    expect(names(taken)).toEqual(names(fresh));
    expect(names(fresh)).toContain("authjs.email-code");
  });
});
