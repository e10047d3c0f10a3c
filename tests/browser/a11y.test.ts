// Accessibility of every page in a real Chromium against the production server: axe-core's
// WCAG 2.2 A/AA rules; each page has one <title> that names it, exactly one <h1> and the <html lang
// dir> of its language; text inputs' borders keep 3:1 against what surrounds them (WCAG 1.4.11,
// which axe does not check). A page is checked in a mode (JavaScript off or on × the light or the
// dark colour scheme × English, German, French or Arabic): by default each page in one mode and
// each mode on several pages (tests/support/a11y-matrix.ts); VESTIBULE_A11Y_FULL=1 checks every
// page in every mode. Every page in every language must also fit a 320 px wide screen (WCAG
// 1.4.10). A new page is one row in PAGES.
import AxeBuilder from "@axe-core/playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { a11yPairs } from "../support/a11y-matrix";
import { connectBrowser, newContext, setUserRole, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { ALICE, startTestIdp, TEST_CLIENT, type TestIdp } from "../support/idp";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";
import { totpCodeAt, totpStep } from "../../app/auth/two-factor/totp.server";
import { enterAddress, requestEmailSignIn, SIGNIN, signInWithPassword } from "../support/signin-form";

const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];
const USER = { email: "ada@example.com", password: "correct horse battery", name: "Ada" };
/** A user with the second factor on: her password sign-in stops at /auth/two-factor. */
const TOTP_USER = { email: "tess@example.com", password: "correct horse battery", name: "Tess" };

/** Addresses found while setting up: links that arrive by e-mail. */
type Links = { emailSignIn: string; emailChange: string; resetPassword: string; adminUser: string; wasntMe: string; invitation: string; authorize: string };

type Sessions = "database" | "jwt";

type PageCase = {
  name: string;
  path: string | ((links: Links) => string);
  signedIn: boolean;
  /** The app's AUTH_SESSION_STRATEGY; "database" unless the page differs with "jwt". */
  sessions?: Sessions;
  status: number;
  title: string;
  heading: string;
  /** Brings the page into the state to check (a refused form), after it loaded. */
  prepare?: (page: Page) => Promise<void>;
  /** Opened in a fresh browser that has just given TOTP_USER's password (a pending sign-in). */
  pendingSecondFactor?: boolean;
  /** Written by the OAuth engine, not React Router: no script, nothing hydrates. */
  scriptless?: boolean;
};

// Every page of the app, once per state worth checking. /dev/outbox exists only in development.
const PAGES: PageCase[] = [
  { name: "home, signed out", path: "/", signedIn: false, status: 200, title: "Vestibule", heading: "Vestibule" },
  { name: "home, signed in", path: "/", signedIn: true, status: 200, title: "Vestibule", heading: "Vestibule" },
  { name: "account", path: "/account", signedIn: true, status: 200, title: "Your account · Vestibule", heading: "Your account" },
  {
    name: "account, stateless sessions",
    path: "/account",
    signedIn: true,
    sessions: "jwt",
    status: 200,
    title: "Your account · Vestibule",
    heading: "Your account",
  },
  {
    name: "account, saved",
    path: "/account?updated=profile",
    signedIn: true,
    status: 200,
    title: "Your account · Vestibule",
    heading: "Your account",
  },
  {
    name: "account, a refused name",
    path: "/account",
    signedIn: true,
    status: 200,
    title: "Your account · Vestibule",
    heading: "Your account",
    prepare: async (page) => {
      await page.locator("#profile-name-input").fill(" ");
      await page.locator("#profile-form [type=submit]").click();
      await page.locator("#profile-name-input-error").waitFor();
    },
  },
  {
    name: "account, a refused address",
    path: "/account",
    signedIn: true,
    status: 200,
    title: "Your account · Vestibule",
    heading: "Your account",
    prepare: async (page) => {
      await page.locator("#email-change-input").fill("someone@localhost");
      await page.locator("#email-change-form [type=submit]").click();
      await page.locator("#email-change-input-error").waitFor();
    },
  },
  {
    name: "account e-mail change, confirm",
    path: (links) => links.emailChange,
    signedIn: true,
    status: 200,
    title: "Confirm your e-mail address · Vestibule",
    heading: "Confirm your e-mail address",
  },
  {
    name: "account e-mail change, a link that is no longer valid (403)",
    path: "/account/email?token=no-such-token&email=new%40example.com",
    signedIn: true,
    status: 403,
    title: "The address was not changed · Vestibule",
    heading: "The address was not changed",
  },
  {
    name: "account, a passkey removed (the passkeys section and its notice)",
    path: "/account?updated=passkey-removed",
    signedIn: true,
    status: 200,
    title: "Your account · Vestibule",
    heading: "Your account",
  },
  {
    name: "account, setting up an authenticator app",
    path: "/account",
    signedIn: true,
    status: 200,
    title: "Your account · Vestibule",
    heading: "Your account",
    prepare: async (page) => {
      await page.locator("#totp-start-form [type=submit]").click();
      await page.locator("#totp-setup").waitFor();
    },
  },
  {
    name: "account, a refused setup code",
    path: "/account",
    signedIn: true,
    status: 200,
    title: "Your account · Vestibule",
    heading: "Your account",
    prepare: async (page) => {
      await page.locator("#totp-start-form [type=submit]").click();
      await page.locator("#totp-confirm-code").fill("000000");
      await page.locator("#totp-confirm-code-form [type=submit]").click();
      await page.locator("#totp-confirm-code-error").waitFor();
    },
  },
  {
    name: "two-factor",
    path: "/auth/two-factor",
    signedIn: false,
    pendingSecondFactor: true,
    status: 200,
    title: "Two-step verification · Vestibule",
    heading: "Two-step verification",
  },
  {
    name: "two-factor, a wrong code",
    path: "/auth/two-factor",
    signedIn: false,
    pendingSecondFactor: true,
    status: 200,
    title: "Two-step verification · Vestibule",
    heading: "Two-step verification",
    prepare: async (page) => {
      await page.locator("#two-factor-code").fill("000000");
      await page.locator("#two-factor-form [type=submit]").click();
      await page.locator("#two-factor-code-error").waitFor();
    },
  },
  {
    name: "re-authentication",
    path: "/auth/reauth?callbackUrl=%2Faccount",
    signedIn: true,
    status: 200,
    title: "Confirm it is you · Vestibule",
    heading: "Confirm it is you",
  },
  {
    name: "re-authentication, a wrong password",
    path: "/auth/reauth?callbackUrl=%2Faccount",
    signedIn: true,
    status: 200,
    title: "Confirm it is you · Vestibule",
    heading: "Confirm it is you",
    prepare: async (page) => {
      await page.locator("#reauth-password").fill("not the password");
      await page.locator("#reauth-password-form [type=submit]").click();
      await page.locator("#reauth-error").waitFor();
    },
  },
  {
    name: "sign-in, the second factor's pending sign-in expired",
    path: "/auth/signin?error=TwoFactorExpired",
    signedIn: false,
    status: 200,
    title: "Sign in · Vestibule",
    heading: "Sign in",
  },
  { name: "welcome", path: "/welcome?callbackUrl=%2Faccount", signedIn: true, status: 200, title: "Welcome · Vestibule", heading: "Welcome, Ada!" },
  { name: "sign-in", path: "/auth/signin", signedIn: false, status: 200, title: "Sign in · Vestibule", heading: "Sign in" },
  { name: "sign-in, signed in already", path: "/auth/signin", signedIn: true, status: 200, title: "Sign in · Vestibule", heading: "Sign in" },
  {
    // Step two of the identifier-first form: the address read-only with "change", the ways to go on.
    name: "sign-in, second step",
    path: "/auth/signin",
    signedIn: false,
    status: 200,
    title: "Sign in · Vestibule",
    heading: "Sign in",
    prepare: (page) => enterAddress(page, USER.email),
  },
  {
    name: "sign-in, wrong password",
    path: "/auth/signin?error=CredentialsSignin&code=credentials",
    signedIn: false,
    status: 200,
    title: "Sign in · Vestibule",
    heading: "Sign in",
  },
  {
    name: "sign-in, refused e-mail address",
    path: "/auth/signin?error=EmailInvalid&email=someone%40localhost",
    signedIn: false,
    status: 200,
    title: "Sign in · Vestibule",
    heading: "Sign in",
  },
  {
    name: "sign-in, session required",
    path: "/auth/signin?error=SessionRequired&callbackUrl=%2Faccount",
    signedIn: false,
    status: 200,
    title: "Sign in · Vestibule",
    heading: "Sign in",
  },
  {
    name: "sign-in, account not linked",
    path: "/auth/signin?error=OAuthAccountNotLinked",
    signedIn: false,
    status: 200,
    title: "Sign in · Vestibule",
    heading: "Sign in",
  },
  { name: "sign-out", path: "/auth/signout", signedIn: true, status: 200, title: "Sign out · Vestibule", heading: "Sign out" },
  {
    name: "check your e-mail",
    path: "/auth/verify-request?provider=email&type=email",
    signedIn: false,
    status: 200,
    title: "Check your email · Vestibule",
    heading: "Check your email",
  },
  {
    name: "error, link no longer valid",
    path: "/auth/error?error=Verification",
    signedIn: false,
    status: 403,
    title: "Unable to sign in · Vestibule",
    heading: "Unable to sign in",
  },
  {
    name: "error, access denied",
    path: "/auth/error?error=AccessDenied",
    signedIn: false,
    status: 403,
    title: "Access denied · Vestibule",
    heading: "Access denied",
  },
  {
    name: "e-mail link, confirm sign-in",
    path: (links) => links.emailSignIn,
    signedIn: false,
    status: 200,
    title: "Sign in · Vestibule",
    heading: "Sign in",
  },
  { name: "sign-up", path: "/auth/signup", signedIn: false, status: 200, title: "Create an account · Vestibule", heading: "Create an account" },
  {
    name: "sign-up, a refused password",
    path: "/auth/signup",
    signedIn: false,
    status: 200,
    title: "Create an account · Vestibule",
    heading: "Create an account",
    prepare: async (page) => {
      await page.locator("#signup-email").fill("new@example.com");
      await page.locator("#signup-password").fill("passwordpassword");
      await page.locator("#signup-form [type=submit]").click();
      await page.locator("#signup-password-error").waitFor();
    },
  },
  {
    name: "forgotten password",
    path: "/auth/forgot-password",
    signedIn: false,
    status: 200,
    title: "Forgot your password? · Vestibule",
    heading: "Forgot your password?",
  },
  {
    name: "new password, from the e-mailed link",
    path: (links) => links.resetPassword,
    signedIn: false,
    status: 200,
    title: "Choose a new password · Vestibule",
    heading: "Choose a new password",
  },
  {
    name: "this wasn't me, from a security e-mail",
    path: (links) => links.wasntMe,
    signedIn: false,
    status: 200,
    title: "This wasn't me · Vestibule",
    heading: "This wasn't me",
  },
  {
    name: "this wasn't me, a link no longer valid (400)",
    path: `/auth/wasnt-me?email=ada%40example.com&token=${"0".repeat(64)}`,
    signedIn: false,
    status: 400,
    title: "This link can no longer be used · Vestibule",
    heading: "This link can no longer be used",
  },
  {
    name: "check your e-mail, after a sign-up",
    path: "/auth/verify-request?provider=email&type=signup",
    signedIn: false,
    status: 200,
    title: "Check your email · Vestibule",
    heading: "Check your email",
  },
  { name: "admin, the user list", path: "/admin", signedIn: true, status: 200, title: "Administration · Vestibule", heading: "Administration" },
  { name: "admin, a search", path: "/admin?q=TESS", signedIn: true, status: 200, title: "Administration · Vestibule", heading: "Administration" },
  {
    name: "admin, a user's page",
    path: (links) => links.adminUser,
    signedIn: true,
    status: 200,
    title: `User ${TOTP_USER.email} · Vestibule`,
    heading: TOTP_USER.email,
  },
  { name: "organizations, the list", path: "/orgs", signedIn: true, status: 200, title: "Organizations · Vestibule", heading: "Organizations" },
  { name: "organizations, create one", path: "/orgs/new", signedIn: true, status: 200, title: "Create an organization · Vestibule", heading: "Create an organization" },
  { name: "an organization, as its owner", path: "/orgs/acme", signedIn: true, status: 200, title: "Acme · Vestibule", heading: "Acme" },
  { name: "an organization's audit log", path: "/orgs/acme/audit", signedIn: true, status: 200, title: "Audit log of Acme · Vestibule", heading: "Audit log of Acme" },
  { name: "an invitation for another address", path: (links) => links.invitation, signedIn: true, status: 403, title: "Invitation · Vestibule", heading: "Invitation" },
  // The OAuth provider's pages (AUTH_PROVIDER=true on the database site): an app's authorization
  // request opens the consent page of a real interaction; /device and the app's "sign out?" are the
  // engine's own pages, in the app's shell.
  { name: "provider, the consent page", path: (links) => links.authorize, signedIn: true, status: 200, title: "Allow Inspector to use your account? · Vestibule", heading: "Allow Inspector to use your account?" },
  { name: "provider, a device's code", path: "/device", signedIn: true, scriptless: true, status: 200, title: "Connect a device · Vestibule", heading: "Connect a device" },
  {
    name: "provider, a device's wrong code",
    path: "/device",
    signedIn: true,
    scriptless: true,
    status: 200,
    title: "Connect a device · Vestibule",
    heading: "Connect a device",
    prepare: async (page) => {
      await page.locator("#device-code").fill("BCDF-GHJK");
      await page.locator("#device-code-form [type=submit]").click();
      await page.locator("#device-error").waitFor();
    },
  },
  { name: "provider, an app's sign out?", path: "/oauth/end_session", signedIn: true, scriptless: true, status: 200, title: "Sign out? · Vestibule", heading: "Sign out?" },
  { name: "not found (404)", path: "/no-such-page", signedIn: false, status: 404, title: "Page not found · Vestibule", heading: "Page not found" },
];

type ColorScheme = "light" | "dark";
/** The languages of the catalogues (app/i18n); a context asks for one by its Accept-Language. */
const LANGUAGES = ["en", "de", "fr", "ar"] as const;
type Language = (typeof LANGUAGES)[number];
const VIEWS: ReadonlyArray<{ javaScriptEnabled: boolean; colorScheme: ColorScheme }> = [
  { javaScriptEnabled: false, colorScheme: "light" },
  { javaScriptEnabled: true, colorScheme: "dark" },
  { javaScriptEnabled: false, colorScheme: "dark" },
  { javaScriptEnabled: true, colorScheme: "light" },
];
/**
 * The ways a visitor sees a page: a view (JavaScript × colour scheme) in a language. Mode i is
 * language i mod 4 in view ⌊i / 4⌋, so neighbouring pages get different languages and views.
 */
const MODES: ReadonlyArray<{ javaScriptEnabled: boolean; colorScheme: ColorScheme; language: Language }> = Array.from(
  { length: VIEWS.length * LANGUAGES.length },
  (_, i) => ({ ...VIEWS[Math.floor(i / LANGUAGES.length)]!, language: LANGUAGES[i % LANGUAGES.length]! }),
);
const PAIRS = a11yPairs(PAGES.length, MODES.length);

let browser: Browser;
let sink: SmtpSink;
let idp: TestIdp;
type StorageState = Awaited<ReturnType<BrowserContext["storageState"]>>;
/** One app per session strategy, each with a user signed in (the state a context starts from). */
const sites = {} as Record<Sessions, { app: RunningApp; signedIn: StorageState }>;
const started: RunningApp[] = [];
const links: Links = { emailSignIn: "", emailChange: "", resetPassword: "", adminUser: "", wasntMe: "", invitation: "", authorize: "" };

/** Signs `user` (USER by default) in with JavaScript off; returns the open context. */
async function signInContext(url: string, user = USER, landing = `${url}/`): Promise<BrowserContext> {
  const context = await newContext(browser, { javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${url}/auth/signin`);
  await signInWithPassword(page, user.email, user.password);
  await page.waitForURL(landing);
  return context;
}

beforeAll(async () => {
  [browser, sink, idp] = await Promise.all([connectBrowser(), startSmtpSink(), startTestIdp({ users: [ALICE] })]);
  const env = {
    AUTH_EMAIL_SERVER: sink.url,
    AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>",
    AUTH_EMAIL_CONFIRM: "true",
    AUTH_OIDC_ISSUER: idp.issuer,
    AUTH_OIDC_ID: TEST_CLIENT.clientId,
    AUTH_OIDC_SECRET: TEST_CLIENT.clientSecret,
    AUTH_OIDC_NAME: "Test IdP",
    AUTH_SIGNUP: "true",
    AUTH_ORGANIZATIONS: "true",
    AUTH_PROVIDER: "true",
    AUTH_PROVIDER_REGISTRATION: "open",
  };
  const start = (strategy: Sessions) => startApp({ ...env, AUTH_SESSION_STRATEGY: strategy }).then((a) => (started.push(a), a));
  const [database, jwt] = await Promise.all([start("database"), start("jwt")]);
  // USER's address counts as proved: she creates an organization below.
  await Promise.all([...started.map((each) => seedUser(each, { ...USER, verified: true })), seedUser(database, TOTP_USER)]);
  // USER is an admin on the database site, for the /admin pages (no other page differs for one).
  setUserRole(database, USER.email, "admin");

  // Signed in on two devices, so /account lists this one and another.
  await (await signInContext(database.url)).close();
  const device = await signInContext(database.url);
  // The link of "change your e-mail address" (opening it changes nothing until its button).
  const account = await device.newPage();
  await account.goto(`${database.url}/account`);
  await account.locator("#email-change-form").getByLabel("New e-mail address").fill("new@example.com");
  await account.locator("#email-change-form").getByRole("button", { name: "Send me a link" }).click();
  await account.locator("#email-change-sent").waitFor();
  links.emailChange = await linkTo("/account/email");
  sites.database = { app: database, signedIn: await device.storageState() };
  await device.close();

  // TOTP_USER turns the second factor on, from /account, with the code of the secret shown.
  const tess = await signInContext(database.url, TOTP_USER);
  const tessAccount = await tess.newPage();
  await tessAccount.goto(`${database.url}/account`);
  await tessAccount.getByRole("button", { name: "Set up an authenticator app" }).click();
  const secret = (await tessAccount.locator("[data-totp-secret]").getAttribute("data-totp-secret"))!;
  await tessAccount.getByLabel("Code from the app").fill(totpCodeAt(secret, totpStep(new Date())));
  await tessAccount.getByRole("button", { name: "Turn on" }).click();
  await tessAccount.locator("[data-recovery-code]").first().waitFor();
  await tess.close();

  // TOTP_USER's page in /admin (her second factor on: every action offered).
  const adminDevice = await newContext(browser, { javaScriptEnabled: false, storageState: sites.database.signedIn });
  const adminPage = await adminDevice.newPage();
  await adminPage.goto(`${database.url}/admin?q=${encodeURIComponent(TOTP_USER.email)}`);
  links.adminUser = (await adminPage.getByRole("link", { name: TOTP_USER.email }).getAttribute("href"))!;
  await adminDevice.close();

  // An organization of USER's on the database site, with a domain and an invitation (whose link,
  // opened by USER, is for another address).
  const orgDevice = await newContext(browser, { javaScriptEnabled: false, storageState: sites.database.signedIn });
  const orgPage = await orgDevice.newPage();
  await orgPage.goto(`${database.url}/orgs/new`);
  await orgPage.locator("#org-name").fill("Acme");
  await orgPage.locator("#org-slug").fill("acme");
  await orgPage.getByRole("button", { name: "Create the organization" }).click();
  await orgPage.waitForURL(/\/orgs\/acme\?done=created/);
  await orgPage.locator("#domain-name").fill("acme.example");
  await orgPage.getByRole("button", { name: "Add the domain" }).click();
  await orgPage.waitForURL(/done=domain-added/);
  await orgPage.locator("#invite-email").fill("bob@example.com");
  await orgPage.getByRole("button", { name: "Send the invitation" }).click();
  await orgPage.waitForURL(/done=invited/);
  links.invitation = await linkTo("/orgs/invitation");
  await orgDevice.close();

  // An app registered on the database site (a public loopback client, as an MCP client registers):
  // each visit of its authorization URL opens a fresh interaction's consent page.
  const registered = await fetch(`${database.url}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_name: "Inspector", redirect_uris: ["http://127.0.0.1/callback"], token_endpoint_auth_method: "none" }),
  });
  expect(registered.status).toBe(201);
  const { client_id } = (await registered.json()) as { client_id: string };
  links.authorize = `/oauth/authorize?${new URLSearchParams({
    client_id,
    response_type: "code",
    redirect_uri: "http://127.0.0.1:61234/callback",
    scope: "openid email profile",
    state: "a11y-state",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
  })}`;

  const jwtDevice = await signInContext(jwt.url);
  sites.jwt = { app: jwt, signedIn: await jwtDevice.storageState() };
  await jwtDevice.close();

  // An e-mail sign-in link; with AUTH_EMAIL_CONFIRM=true it opens a page instead of signing in.
  const context = await newContext(browser, { javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${database.url}/auth/signin`);
  await requestEmailSignIn(page, USER.email);
  links.emailSignIn = await linkTo("/auth/callback/email");
  // A forgotten-password link (its page shows the new-password form without using it).
  await page.goto(`${database.url}/auth/forgot-password`);
  await page.locator("#forgot-email").fill(USER.email);
  await page.getByRole("button", { name: "Send me a link" }).click();
  await page.waitForURL(/\/auth\/verify-request/);
  links.resetPassword = await linkTo("/auth/reset-password");
  // The "This wasn't me" link of a security e-mail (the sign-ins above were from new browsers).
  links.wasntMe = await wasntMeLink();
  await context.close();
});

/**
 * The link to `path` in the newest message that has one. Security notices (the second factor
 * turned on, …) go out from the mail queue at their own pace, so a message's place in the sink's
 * order says nothing; its link does.
 */
async function linkTo(path: string): Promise<string> {
  const found = (messages: { text?: string | null }[]) =>
    messages
      .map((m) => /https?:\/\/\S+/.exec(m.text ?? "")?.[0])
      .filter((url): url is string => url !== undefined && new URL(url).pathname === path)
      .at(-1);
  for (let count = 1; ; count++) {
    const link = found(await sink.waitFor(count, 60_000));
    if (link) return link;
  }
}

/** The "This wasn't me" link of the newest security e-mail that has one (ADR 081). */
async function wasntMeLink(): Promise<string> {
  for (let count = 1; ; count++) {
    const link = (await sink.waitFor(count, 60_000)).map((m) => /https?:\/\/\S+\/auth\/wasnt-me\?\S+/.exec(m.text ?? "")?.[0]).filter(Boolean).at(-1);
    if (link) return link;
  }
}

afterAll(async () => {
  await browser?.close();
  await Promise.all(started.map((a) => a.stop()));
  await Promise.all([idp?.stop(), sink?.close()]);
});

/** axe's findings, one line each, so a failure reads as what to fix. */
async function axeViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
  return results.violations.flatMap((v) =>
    v.nodes.map((n) => `${v.id} (${v.impact}) at ${n.target.join(" ")}: ${n.failureSummary?.replace(/\s+/g, " ")}`),
  );
}

/**
 * The page for axe. With JavaScript off Chromium runs no timers, and axe waits on them, so it
 * never finishes there: it analyses a copy of the page exactly as the visitor got it (the
 * document the server rendered, scripts removed so nothing hydrates), opened at the same URL
 * in a page that runs scripts.
 */
async function pageForAxe(page: Page, javaScriptEnabled: boolean, analysis: () => Promise<BrowserContext>, tabs: TabPool): Promise<Page> {
  if (javaScriptEnabled) return page;
  const html = await page.evaluate(() => {
    const copy = document.documentElement.cloneNode(true) as HTMLElement;
    for (const script of copy.querySelectorAll("script")) script.remove();
    return `<!DOCTYPE html>${copy.outerHTML}`;
  });
  const copy = await tabs.take(await analysis());
  const url = page.url();
  await copy.route(url, (route) => route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: html }));
  await copy.goto(url);
  // Only this copy is served from the string: the tab's next page is fetched again.
  await copy.unroute(url);
  return copy;
}

/** Text inputs whose border is under 3:1 against the input's own background or what surrounds it. */
async function faintInputBorders(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const rgb = (css: string) => {
      const m = /rgba?\(([\d.]+),?\s*([\d.]+),?\s*([\d.]+)(?:[,/]\s*([\d.]+))?\)/.exec(css);
      if (!m) throw new Error(`unexpected colour ${css}`);
      return { r: Number(m[1]), g: Number(m[2]), b: Number(m[3]), a: m[4] === undefined ? 1 : Number(m[4]) };
    };
    const luminance = ({ r, g, b }: { r: number; g: number; b: number }) => {
      const c = [r, g, b].map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * c[0]! + 0.7152 * c[1]! + 0.0722 * c[2]!;
    };
    const ratio = (x: string, y: string) => {
      const [a, b] = [luminance(rgb(x)), luminance(rgb(y))].sort((p, q) => q - p);
      return (a! + 0.05) / (b! + 0.05);
    };
    const backgroundOf = (el: Element | null): string => {
      for (let e = el; e; e = e.parentElement) {
        const bg = getComputedStyle(e).backgroundColor;
        if (rgb(bg).a > 0) return bg;
      }
      return "rgb(255, 255, 255)";
    };
    const faint: string[] = [];
    for (const input of document.querySelectorAll<HTMLInputElement>("input[type=email], input[type=password], input[type=text], input[type=url]")) {
      if (!input.checkVisibility()) continue;
      const border = getComputedStyle(input).borderTopColor;
      for (const [against, bg] of [
        ["its background", backgroundOf(input)],
        ["the surrounding background", backgroundOf(input.parentElement)],
      ] as const) {
        const r = ratio(border, bg);
        if (r < 3) faint.push(`#${input.id}: border ${border} on ${against} ${bg} is ${r.toFixed(2)}:1`);
      }
    }
    return faint;
  });
}

for (const javaScriptEnabled of [false, true]) {
  // The pages this run checks with JavaScript so, each in the languages and colour schemes it is
  // checked in.
  const pages = PAGES.flatMap((entry, index) => {
    const modes = PAIRS.filter((p) => p.page === index && MODES[p.mode]!.javaScriptEnabled === javaScriptEnabled).map((p) => MODES[p.mode]!);
    return LANGUAGES.flatMap((language) => {
      const schemes = modes.filter((m) => m.language === language).map((m) => m.colorScheme);
      return schemes.length ? [{ entry, language, schemes }] : [];
    });
  });
  describe.skipIf(pages.length === 0)(`pages with JavaScript ${javaScriptEnabled ? "on" : "off"}`, () => {
    // The pages are checked side by side (it.concurrent): each context is made once, by whichever
    // page asks first, and shared by the pages that need the same one.
    const contexts = new Map<string, Promise<BrowserContext>>();
    let analysisContext: Promise<BrowserContext> | undefined;
    const analysis = () => (analysisContext ??= newContext(browser, { javaScriptEnabled: true }));
    const tabs = new TabPool();
    const contextFor = (sessions: Sessions, signedIn: boolean, language: Language) => {
      const key = `${sessions} ${signedIn} ${language}`;
      let context = contexts.get(key);
      if (!context) {
        context = newContext(browser, { javaScriptEnabled, locale: language, storageState: signedIn ? sites[sessions].signedIn : undefined });
        contexts.set(key, context);
      }
      return context;
    };
    afterAll(async () => {
      const all = await Promise.all([...contexts.values(), ...(analysisContext ? [analysisContext] : [])]);
      await Promise.all(all.map((c) => c.close()));
    });

    for (const { entry, language, schemes } of pages) {
      it.concurrent(`${entry.name} (${language}): one <title> and one <h1>, no WCAG 2.2 A/AA violation in ${schemes.join(" and ")}`, async ({ expect }) => {
        const page = await openEntry(entry, { javaScriptEnabled, language, contextFor, contexts, tabs });
        const errors: string[] = [];
        const onError = (e: Error) => errors.push(e.message);
        page.on("pageerror", onError);
        await entry.prepare?.(page);

        // Soft, so one run names every problem of the page.
        const titles = await page.evaluate(() => ({ inDocument: document.querySelectorAll("title").length, inHead: document.head.querySelectorAll("title").length }));
        expect.soft(titles, "<title> elements").toEqual({ inDocument: 1, inHead: 1 });
        const headings = page.locator("h1");
        expect.soft(await headings.count(), "<h1> elements").toBe(1);
        expect.soft(await htmlLanguage(page), "<html lang dir>").toEqual({ lang: language, dir: language === "ar" ? "rtl" : "ltr" });
        if (language === "en") {
          expect.soft(await page.title(), "title").toBe(entry.title);
          expect.soft((await headings.first().textContent())?.trim(), "<h1>").toBe(entry.heading);
        } else {
          // The catalogues' own tests check every text; here only that the page has them.
          expect.soft((await page.title()).trim(), "title").not.toBe("");
          expect.soft((await headings.first().textContent())?.trim(), "<h1>").not.toBe("");
        }

        const axePage = await pageForAxe(page, javaScriptEnabled, analysis, tabs);
        const found: Partial<Record<ColorScheme, { violations: string[]; faintInputBorders: string[] }>> = {};
        for (const colorScheme of schemes) {
          await page.emulateMedia({ colorScheme });
          await axePage.emulateMedia({ colorScheme });
          found[colorScheme] = { violations: await axeViolations(axePage), faintInputBorders: await faintInputBorders(page) };
        }
        const clean = { violations: [], faintInputBorders: [] };
        expect.soft(found).toEqual(Object.fromEntries(schemes.map((scheme) => [scheme, clean])));
        expect(errors).toEqual([]);
        page.off("pageerror", onError);
        if (axePage !== page) tabs.give(axePage);
        if (entry.pendingSecondFactor) await page.close();
        else tabs.give(page);
      });
    }
  });
}

type ContextFor = (sessions: Sessions, signedIn: boolean, language: Language) => Promise<BrowserContext>;

/**
 * Tabs kept open between pages, by context: a new tab costs Chromium a renderer, more than most
 * pages do, so a page is opened in a tab an earlier page of the same context left. Pages checked
 * side by side each take a tab of their own.
 */
class TabPool {
  #idle = new Map<BrowserContext, Page[]>();
  async take(context: BrowserContext): Promise<Page> {
    return this.#idle.get(context)?.pop() ?? context.newPage();
  }
  give(page: Page): void {
    const idle = this.#idle.get(page.context()) ?? [];
    idle.push(page);
    this.#idle.set(page.context(), idle);
  }
}

/** Well inside the pending sign-in's 300 s life, with room for the page that uses it. */
const PENDING_REUSE_MS = 180_000;

/**
 * Opens `entry` as its visitor: in the shared context of its sessions, sign-in state and language,
 * or, for a pending second factor, in a fresh context that has just given TOTP_USER's password.
 */
async function openEntry(
  entry: PageCase,
  {
    javaScriptEnabled,
    language,
    contextFor,
    contexts,
    viewport,
    pendingStates,
    tabs,
  }: {
    javaScriptEnabled: boolean;
    language: Language;
    contextFor: ContextFor;
    contexts: Map<string, Promise<BrowserContext>>;
    viewport?: { width: number; height: number };
    /** Pending sign-ins to reuse (by sessions and language) while young; none: one per page. */
    pendingStates?: Map<string, { state: StorageState; at: number }>;
    /** Where the page's tab comes from in a shared context (the caller gives it back); none: a new tab. */
    tabs?: TabPool;
  },
): Promise<Page> {
  const sessions = entry.sessions ?? "database";
  // A pending sign-in lives 300 s: each such page gets its own, made just before it is opened,
  // or, given pendingStates, one made less than PENDING_REUSE_MS ago for these sessions and language.
  let pendingState: StorageState | null = null;
  if (entry.pendingSecondFactor) {
    const key = `${sessions} ${language}`;
    const kept = pendingStates?.get(key);
    if (kept && Date.now() - kept.at < PENDING_REUSE_MS) pendingState = kept.state;
    else {
      const at = Date.now();
      const pending = await signInContext(sites[sessions].app.url, TOTP_USER, `${sites[sessions].app.url}/auth/two-factor`);
      pendingState = await pending.storageState();
      await pending.close();
      pendingStates?.set(key, { state: pendingState, at });
    }
  }
  const context = pendingState
    ? await newContext(browser, { javaScriptEnabled, locale: language, viewport, storageState: pendingState })
    : await contextFor(sessions, entry.signedIn, language);
  if (pendingState) contexts.set(`pending ${entry.name} ${language}`, Promise.resolve(context));
  const page = pendingState || !tabs ? await context.newPage() : await tabs.take(context);
  const path = typeof entry.path === "function" ? entry.path(links) : entry.path;
  const response = await page.goto(new URL(path, sites[sessions].app.url).href);
  expect(response!.status(), entry.name).toBe(entry.status);
  if (javaScriptEnabled && !entry.scriptless) await waitForHydration(page);
  return page;
}

async function htmlLanguage(page: Page): Promise<{ lang: string | null; dir: string | null }> {
  return page.evaluate(() => ({ lang: document.documentElement.getAttribute("lang"), dir: document.documentElement.getAttribute("dir") }));
}

/**
 * WCAG 1.4.10 (reflow): at 320 CSS pixels wide nothing makes the page scroll sideways. Every page,
 * in every language (German words are long, Arabic mirrors), with JavaScript off: the layout is the
 * server's, and hydration adds no width. Cheap (no axe), so it is never a subset.
 */
describe("every page fits a 320 px wide screen, in every language (JavaScript off)", () => {
  const NARROW = { width: 320, height: 640 };
  const contexts = new Map<string, Promise<BrowserContext>>();
  const contextFor: ContextFor = (sessions, signedIn, language) => {
    const key = `${sessions} ${signedIn} ${language}`;
    let context = contexts.get(key);
    if (!context) {
      context = newContext(browser, { javaScriptEnabled: false, locale: language, viewport: NARROW, storageState: signedIn ? sites[sessions].signedIn : undefined });
      contexts.set(key, context);
    }
    return context;
  };
  afterAll(async () => {
    await Promise.all((await Promise.all(contexts.values())).map((c) => c.close()));
  });
  // The pending second-factor pages of one language ("two-factor", then "two-factor, a wrong
  // code", in that order) share one pending sign-in: one password check instead of two.
  const pendingStates = new Map<string, { state: StorageState; at: number }>();
  const tabs = new TabPool();

  for (const language of LANGUAGES) {
    it.concurrent(`${language}: no page is wider than the screen`, async ({ expect }) => {
      const wide: string[] = [];
      for (const entry of PAGES) {
        const page = await openEntry(entry, { javaScriptEnabled: false, language, contextFor, contexts, viewport: NARROW, pendingStates, tabs });
        await entry.prepare?.(page);
        // The widest element that reaches past the screen's edge names what to fix.
        const overflow = await page.evaluate(() => {
          const width = document.documentElement.clientWidth;
          if (document.documentElement.scrollWidth <= width) return null;
          let worst: { what: string; right: number } | null = null;
          // What scrolls inside its own box (a wide table in a scrolling card) widens nothing.
          const clipped = (el: Element) => {
            for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
              if (getComputedStyle(up).overflowX === "visible") continue;
              const box = up.getBoundingClientRect();
              // Scrolling inside a box that itself stays on the screen.
              if (box.right <= width + 0.5 && box.left >= -0.5) return true;
            }
            return false;
          };
          for (const el of document.body.querySelectorAll("*")) {
            if (clipped(el)) continue;
            const box = el.getBoundingClientRect();
            // Text that does not wrap sticks out of a box that fits: count its overflow too.
            const spill = getComputedStyle(el).overflowX === "visible" ? Math.max(0, el.scrollWidth - el.clientWidth) : 0;
            const reach = (document.dir === "rtl" ? width - box.left : box.right) + spill;
            if (reach > width + 0.5 && (!worst || reach > worst.right)) worst = { what: `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${el.getAttribute("class") ? `.${el.getAttribute("class")!.trim().split(/\s+/).join(".")}` : ""}`, right: reach };
          }
          return { scrollWidth: document.documentElement.scrollWidth, width, worst };
        });
        if (overflow) wide.push(`${entry.name}: ${overflow.scrollWidth} px wide (screen ${overflow.width}), widest ${overflow.worst?.what} reaching ${Math.round(overflow.worst?.right ?? 0)} px`);
        // A pending sign-in's own context has its own tab; a shared context's goes on to the next page.
        if (entry.pendingSecondFactor) await page.close();
        else tabs.give(page);
      }
      expect(wide).toEqual([]);
      // One page after another, 33 of them, a few signing in first: more than the default 30 s
      // on a loaded machine.
    }, 300_000);
  }
});

/**
 * A refused field: marked invalid, described by its message, and the message is an alert (read
 * out when it appears). When the answer is a new page (JavaScript off, or the sign-in forms,
 * which always post the whole page) the field also takes the focus, so a screen reader starts
 * there and reads the message as its description.
 */
async function expectRefusal(page: Page, fieldSelector: string, message: string, { focused }: { focused: boolean }) {
  const field = page.locator(fieldSelector);
  expect(await field.getAttribute("aria-invalid")).toBe("true");
  const describedBy = (await field.getAttribute("aria-describedby"))?.split(/\s+/) ?? [];
  const descriptions = await page.evaluate(
    (ids) =>
      ids.map((id) => {
        const el = document.getElementById(id);
        return { id, text: el?.textContent ?? null, alert: el?.closest('[role="alert"]') != null };
      }),
    describedBy,
  );
  expect(descriptions).toEqual([expect.objectContaining({ text: message, alert: true })]);
  if (focused) expect(await page.evaluate(() => document.activeElement?.id ?? null)).toBe(fieldSelector.slice(1));
}

for (const javaScriptEnabled of [false, true]) {
  describe(`a refused form with JavaScript ${javaScriptEnabled ? "on" : "off"}`, () => {
    async function open(path: string, signedIn: boolean) {
      const context = await newContext(browser, { javaScriptEnabled, storageState: signedIn ? sites.database.signedIn : undefined });
      const page = await context.newPage();
      await page.goto(new URL(path, sites.database.app.url).href);
      if (javaScriptEnabled) await waitForHydration(page);
      return { page, done: () => context.close() };
    }

    it("/account: an empty name and a refused address are announced and tied to their field", async () => {
      const { page, done } = await open("/account", true);
      await page.getByLabel("Display name").fill(" ");
      await page.getByRole("button", { name: "Save name" }).click();
      await page.locator("#profile-name-input-error").waitFor();
      // Without JavaScript the refusal is a redirect to the section's notice (Post/Redirect/Get, so
      // Back never re-posts): the browser moves to that notice, and the field is marked and described.
      await expectRefusal(page, "#profile-name-input", "Name cannot be empty.", { focused: false });

      await page.getByLabel("New e-mail address").fill("someone@localhost");
      await page.getByRole("button", { name: "Send me a link" }).click();
      await page.locator("#email-change-input-error").waitFor();
      const message = await page.locator("#email-change-input-error").textContent();
      expect(message).toMatch(/\S/);
      await expectRefusal(page, "#email-change-input", message!, { focused: false });
      await done();
    });

    it("/auth/signin: a wrong password and a refused address are announced and tied to their fields", async () => {
      const { page, done } = await open("/auth/signin", false);
      await signInWithPassword(page, USER.email, "not the password");
      await page.waitForURL(/error=CredentialsSignin/);
      // Step two again, the address kept read-only: the refusal is the password's to fix.
      const wrong = "Sign in failed. Check the details you provided are correct.";
      await expectRefusal(page, SIGNIN.password, wrong, { focused: true });
      expect(await page.locator(SIGNIN.shownAddress).inputValue()).toBe(USER.email);

      // "Change", then an address the browser lets through but the server refuses: step one.
      await page.locator(SIGNIN.change).click();
      await page.locator(SIGNIN.addressInput).fill("someone@localhost");
      await page.locator(`${SIGNIN.addressForm} button[type="submit"]`).click();
      await page.waitForURL(/error=EmailInvalid/);
      await expectRefusal(page, SIGNIN.addressInput, "Unable to sign in. Enter one e-mail address, such as name@example.com.", { focused: true });
      await done();
    });
  });
}
