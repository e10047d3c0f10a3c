// Sign-up pre-hijack (contract section 15): an attacker signs up the victim's address with HIS
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
    const weak = await choosePassword(phone, linkIn(message), "password");
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
