// What a visitor reads (issue 32's walk, Arabic, 320 px, JavaScript off and on): an answer on
// /account lands in view and takes the focus; an e-mail address breaks only after "@" or before a
// "." and keeps its full stop after it in Arabic; /orgs/new's fields look like every other field;
// the OAuth provider's own pages wear the app's shell. Boxes, focus and computed styles in Chromium
// against the production server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, BrowserContextOptions, Locator, Page } from "playwright-core";
import { connectBrowser, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";
import { requestEmailSignIn, signInWithPassword } from "../support/signin-form";
import { NOTICE_SECTION, noticeAnchor } from "../../app/components/account-sections";

const PASSWORD = "correct horse battery staple";
/** A long address: wider than the profile's value column on a phone. */
const ADA = { email: "ada.lovelace.analytical-engine@example.com", password: PASSWORD, name: "Ada Lovelace", verified: true };
const PHONE = { width: 320, height: 640 };

type StorageState = Awaited<ReturnType<BrowserContext["storageState"]>>;
let browser: Browser;
let app: RunningApp;
let sink: SmtpSink;
let signedIn: StorageState;
const contexts: BrowserContext[] = [];

async function open(path: string, options: BrowserContextOptions & { signed?: boolean } = {}): Promise<Page> {
  const { signed = true, ...rest } = options;
  const context = await newContext(browser, { viewport: PHONE, storageState: signed ? signedIn : undefined, ...rest });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${app.url}${path}`);
  if (rest.javaScriptEnabled !== false) await waitForHydration(page);
  return page;
}

beforeAll(async () => {
  [browser, sink] = await Promise.all([connectBrowser(), startSmtpSink()]);
  app = await startApp({ AUTH_ORGANIZATIONS: "true", AUTH_PROVIDER: "true", AUTH_EMAIL_SERVER: sink.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>" });
  await seedUser(app, ADA);
  const context = await newContext(browser, { javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${app.url}/auth/signin`);
  await signInWithPassword(page, ADA.email, ADA.password);
  await page.waitForURL(`${app.url}/`);
  signedIn = await context.storageState();
  await context.close();
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => {})));
  await browser?.close();
  await app?.stop();
  await sink?.close();
});

/**
 * How long an answer may take to land: Chromium moves the focus to a fragment's target only once
 * the new page has loaded and laid out, which on a loaded two-core machine can take seconds after
 * the notice is attached (the poll's default second is not enough). The poll still waits on the
 * state, not the clock.
 */
const LANDED = { timeout: 15_000 };

/** Whether the element is focused and its box lies inside the viewport. */
async function focusedInView(locator: Locator): Promise<{ focused: boolean; inView: boolean; where?: string }> {
  return locator.evaluate((el) => {
    const box = el.getBoundingClientRect();
    // A pixel's rounding either way: the scroll lands the box's edge at a fraction.
    const inView = box.top >= -1 && box.bottom <= window.innerHeight + 1 && box.height > 0;
    const focused = document.activeElement === el;
    // What to fix, when it is not: where the box is, what has the focus.
    const where = `top ${Math.round(box.top)}, bottom ${Math.round(box.bottom)}, viewport ${window.innerHeight}, scrollY ${Math.round(window.scrollY)}, focus on ${document.activeElement?.id || document.activeElement?.tagName}`;
    return focused && inView ? { focused, inView } : { focused, inView, where };
  });
}

/**
 * Where the text of `locator` breaks into lines: for each line after the first, the characters
 * either side of the break ("@|l", "e|.com").
 */
async function lineBreaks(locator: Locator): Promise<string[]> {
  return locator.evaluate((el) => {
    const text = el.textContent ?? "";
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    const tops: number[] = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.textContent!.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        tops.push(Math.round(range.getBoundingClientRect().top));
      }
    }
    const breaks: string[] = [];
    for (let i = 1; i < tops.length; i++) if (tops[i]! > tops[i - 1]!) breaks.push(`${text[i - 1]}|${text[i]}`);
    return breaks;
  });
}

/** A break at a sensible point of an address: after "@" or "-", before "." or "/". */
const SENSIBLE = /^(@\|.|-\|.|.\|\.|.\|\/)$/;

describe("an answer on /account lands in view and takes the focus", () => {
  for (const javaScriptEnabled of [false, true]) {
    it(`the link sent for a new address: its notice is on screen and focused (320 px, JavaScript ${javaScriptEnabled ? "on" : "off"})`, async () => {
      const page = await open("/account", { javaScriptEnabled });
      await page.locator("#email-change-input").fill(`new-${javaScriptEnabled}@example.com`);
      await page.locator("#email-change-form [type=submit]").click();
      const notice = page.locator("#email-change-sent");
      await notice.waitFor();
      await expect.poll(() => focusedInView(notice), LANDED).toEqual({ focused: true, inView: true });
    });

    it(`a saved name: the profile's notice is on screen and focused (320 px, JavaScript ${javaScriptEnabled ? "on" : "off"})`, async () => {
      const page = await open("/account", { javaScriptEnabled });
      await page.locator("#profile-name-input").fill("Ada King");
      await page.locator("#profile-form [type=submit]").click();
      const notice = page.locator(`#${noticeAnchor("profile")}`);
      await notice.waitFor();
      await expect.poll(() => focusedInView(notice), LANDED).toEqual({ focused: true, inView: true });
    });

    it(`every section's notice, opened at its address, is on screen and focused (320 px, JavaScript ${javaScriptEnabled ? "on" : "off"})`, async () => {
      const missed: string[] = [];
      for (const [updated, section] of Object.entries(NOTICE_SECTION)) {
        const page = await open(`/account?updated=${updated}#${noticeAnchor(section)}`, { javaScriptEnabled });
        const notice = page.locator(`#${noticeAnchor(section)}`);
        // The two-factor notice shows only to a user with the factor's section; every other one here.
        if ((await notice.count()) === 0) continue;
        const state = await focusedInView(notice);
        if (!state.focused || !state.inView) missed.push(`${updated}: ${JSON.stringify(state)}`);
        await page.context().close();
      }
      expect(missed).toEqual([]);
    });
  }
});

describe("addresses inside sentences (320 px, Arabic)", () => {
  it("the /account profile's address breaks only after @ or before a dot, left to right, and the page does not scroll sideways", async () => {
    for (const locale of ["ar", "en", "de"]) {
      const page = await open("/account", { locale, javaScriptEnabled: false });
      const address = page.locator("#profile-email bdi");
      expect(await address.getAttribute("dir")).toBe("ltr");
      expect(await address.textContent()).toBe(ADA.email);
      const breaks = await lineBreaks(address);
      for (const at of breaks) expect.soft(at, `${locale}: a break inside the address`).toMatch(SENSIBLE);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
    }
  });

  it("a short address that fits on a line is never broken at 320 px: it moves whole to the next line (verify-request, Arabic)", async () => {
    const email = "u5@example.com";
    await seedUser(app, { email, password: PASSWORD, name: "U Five", verified: true });
    for (const javaScriptEnabled of [false, true]) {
      const page = await open("/auth/signin", { locale: "ar", javaScriptEnabled, signed: false });
      await requestEmailSignIn(page, email);
      await page.waitForURL(/\/auth\/verify-request/);
      const address = page.locator("#verify-address bdi");
      expect(await address.textContent()).toBe(email);
      // One line: its box is one line of text high.
      const { height, lineHeight } = await address.evaluate((el) => ({ height: el.getBoundingClientRect().height, lineHeight: parseFloat(getComputedStyle(el).lineHeight) }));
      expect(height).toBeLessThan(lineHeight * 1.5);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
    }
  });

  it("delete my account: the word to type is set apart from its sentence (a bordered <kbd>)", async () => {
    const page = await open("/account", { javaScriptEnabled: false });
    const word = page.locator('label[for="account-delete-confirm"] kbd');
    expect(await word.textContent()).toBe("DELETE");
    expect(await word.evaluate((el) => getComputedStyle(el).borderTopStyle)).toBe("solid");
  });

  it("check your e-mail (Arabic): the address is one left-to-right run and the full stop comes after it", async () => {
    const page = await open("/auth/signin", { locale: "ar", javaScriptEnabled: false, signed: false });
    await requestEmailSignIn(page, ADA.email);
    await page.waitForURL(/\/auth\/verify-request/);
    const sentence = page.locator("#verify-address");
    const address = sentence.locator("bdi");
    expect(await address.getAttribute("dir")).toBe("ltr");
    expect(await address.textContent()).toBe(ADA.email);
    for (const at of await lineBreaks(address)) expect.soft(at).toMatch(SENSIBLE);
    // The full stop: the sentence's last character, on the address's last line, to its left (right to left, after it).
    const where = await sentence.evaluate((p) => {
      const bdi = p.querySelector("bdi")!;
      const last = p.lastChild!;
      const range = document.createRange();
      range.setStart(last, last.textContent!.length - 1);
      range.setEnd(last, last.textContent!.length);
      const stop = range.getBoundingClientRect();
      const lines = [...bdi.getClientRects()];
      const lastLine = lines.reduce((a, b) => (b.top > a.top ? b : a));
      return { stop: last.textContent!.at(-1), sameLine: Math.abs(stop.top - lastLine.top) < 4, leftOfAddress: stop.right <= lastLine.left + 1 };
    });
    expect(where).toEqual({ stop: ".", sameLine: true, leftOfAddress: true });
  });
});

describe("/orgs/new looks like the other forms", () => {
  const INPUT_LOOK = ["font-family", "font-size", "border-top-width", "border-top-style", "border-top-color", "border-radius", "padding-top", "background-color", "color"];
  const looks = (locator: Locator) =>
    locator.evaluate((el, names) => Object.fromEntries(names.map((n) => [n, getComputedStyle(el).getPropertyValue(n)])), INPUT_LOOK);

  for (const colorScheme of ["light", "dark"] as const) {
    it(`its name and short-name fields are styled like /account's fields, and the path in its help is left to right (${colorScheme}, Arabic)`, async () => {
      const account = await open("/account", { colorScheme, locale: "ar", javaScriptEnabled: false });
      const field = await looks(account.locator("#profile-name-input"));
      const page = await open("/orgs/new", { colorScheme, locale: "ar", javaScriptEnabled: false });
      expect(await looks(page.locator("#org-name"))).toEqual(field);
      expect(await looks(page.locator("#org-slug"))).toEqual(field);
      const path = page.locator("#org-slug-help bdi");
      expect(await path.getAttribute("dir")).toBe("ltr");
      expect(await path.textContent()).toBe("/orgs/…");
    });
  }
});

describe("the OAuth provider's own pages wear the app's shell", () => {
  for (const locale of ["en", "ar"]) {
    it(`/device at 320 px (${locale}): the header, one card, a field and a primary button styled as on /auth/signin, nothing wider than the screen`, async () => {
      const signin = await open("/auth/signin", { locale, javaScriptEnabled: false, signed: false });
      const primary = await signin.locator("form button.button:not(.secondary)[type=submit]").first().evaluate((el) => getComputedStyle(el).backgroundColor);
      const page = await open("/device", { locale, javaScriptEnabled: false });
      expect(await page.locator(".site-header .brand").count()).toBe(1);
      expect(await page.locator("main .card h1").count()).toBe(1);
      expect(await page.locator("#device-code").evaluate((el) => getComputedStyle(el).borderTopStyle)).toBe("solid");
      expect(await page.locator("#device-code-form button[type=submit]").evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(primary);
      expect(await page.evaluate(() => document.documentElement.dir)).toBe(locale === "ar" ? "rtl" : "ltr");
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
    });
  }

  // Signed in to Vestibule, not through an app: the engine's own page would submit itself (ADR 161).
  it("an app's sign out? at 320 px in Arabic: asked on the app's card, two buttons, primary and secondary, apart", async () => {
    const page = await open("/oauth/end_session", { locale: "ar", javaScriptEnabled: false });
    const yes = await page.locator("#provider-logout").boundingBox();
    const no = await page.locator("#provider-stay").boundingBox();
    expect(await page.locator("#provider-stay").getAttribute("class")).toContain("secondary");
    expect(no!.y - (yes!.y + yes!.height)).toBeGreaterThanOrEqual(8);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
  });

  it("an engine error names no bare code: the code is offered to the app's makers in a sentence", async () => {
    const page = await open("/oauth/authorize?client_id=no-such-app&response_type=code", { locale: "en", javaScriptEnabled: false, signed: false });
    expect(await page.locator(".site-header .brand").count()).toBe(1);
    const code = page.locator("#provider-error-code");
    expect(await code.textContent()).toMatch(/^The code to give them: \S+\.$/);
  });
});
