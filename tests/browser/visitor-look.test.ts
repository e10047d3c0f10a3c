// What a visitor sees (issue 32): a walk through the pages in a real Chromium against the
// production server, JavaScript off and on, light and dark, on a 320 px phone and a 1280 px
// screen, in English and Arabic. Each test does what the visitor did and checks the page's boxes
// and computed styles, the things a screenshot shows: tables whose columns all fit a phone, the
// small controls styled like the others, actions that do not touch, no sentence about JavaScript
// flashing where JavaScript runs, a setup key in groups with a working Copy button, one danger
// style for what destroys, addresses left to right inside right-to-left pages.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, BrowserContextOptions, Locator, Page, Route } from "playwright-core";
import { connectBrowser, newContext, setUserRole, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { signInWithPassword, SIGNIN, enterAddress } from "../support/signin-form";
import { totpCodeAt, totpStep } from "../../app/auth/two-factor/totp.server";

const PASSWORD = "correct horse battery staple";
/** An admin with a long address (the widest first column), signed in on two devices. */
const ADA = { email: "ada.lovelace.analytical-engine@example.com", password: PASSWORD, name: "Ada Lovelace" };
/** Turns the second factor on in the Copy test. */
const TESS = { email: "tess@example.com", password: PASSWORD, name: "Tess" };
/** Has the second factor on from the start: every destructive action is on her pages. */
const TOM = { email: "tom@example.com", password: PASSWORD, name: "Tom" };

type StorageState = Awaited<ReturnType<BrowserContext["storageState"]>>;
let browser: Browser;
let app: RunningApp;
const signedIn = {} as Record<"ada" | "tess" | "tom", StorageState>;
let tomAdminPage = "";
const contexts: BrowserContext[] = [];

async function context(options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const made = await newContext(browser, options);
  contexts.push(made);
  return made;
}

/** Signs `user` in with JavaScript off; the context's state once signed in. */
async function signIn(user: { email: string; password: string }): Promise<StorageState> {
  const device = await context({ javaScriptEnabled: false });
  const page = await device.newPage();
  await page.goto(`${app.url}/auth/signin`);
  await signInWithPassword(page, user.email, user.password);
  await page.waitForURL(`${app.url}/`);
  return device.storageState();
}

/** On /account, open in `page`: sets up the authenticator app and turns it on; the shown recovery codes. */
async function turnOnSecondFactor(page: Page): Promise<{ secret: string; codes: string[] }> {
  await page.locator("#totp-start-form [type=submit]").click();
  const secret = (await page.locator("[data-totp-secret]").getAttribute("data-totp-secret"))!;
  await page.locator("#totp-confirm-code").fill(totpCodeAt(secret, totpStep(new Date())));
  await page.locator("#totp-confirm-code-form [type=submit]").click();
  await page.locator("[data-recovery-code]").first().waitFor();
  const codes = await page.locator("[data-recovery-code]").evaluateAll((els) => els.map((e) => e.getAttribute("data-recovery-code")!));
  return { secret, codes };
}

beforeAll(async () => {
  [browser, app] = await Promise.all([connectBrowser(), startApp()]);
  for (const user of [ADA, TESS, TOM]) await seedUser(app, user);
  setUserRole(app, ADA.email, "admin");
  // Two devices: /account lists both sessions and the activity has a row per sign-in.
  await signIn(ADA);
  signedIn.ada = await signIn(ADA);
  signedIn.tess = await signIn(TESS);
  signedIn.tom = await signIn(TOM);
  const tom = await context({ javaScriptEnabled: false, storageState: signedIn.tom });
  const tomPage = await tom.newPage();
  await tomPage.goto(`${app.url}/account`);
  await turnOnSecondFactor(tomPage);
  signedIn.tom = await tom.storageState();
  const admin = await context({ javaScriptEnabled: false, storageState: signedIn.ada });
  const adminPage = await admin.newPage();
  await adminPage.goto(`${app.url}/admin?q=${encodeURIComponent(TOM.email)}`);
  tomAdminPage = (await adminPage.getByRole("link", { name: TOM.email }).getAttribute("href"))!;
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => {})));
  await browser?.close();
  await app?.stop();
});

type Box = { x: number; y: number; width: number; height: number };
async function boxOf(locator: Locator): Promise<Box> {
  const box = await locator.boundingBox();
  if (!box) throw new Error(`${locator} has no box (not rendered)`);
  return box;
}

/** The room between two boxes: negative when they overlap, 0 when they touch. */
function separation(a: Box, b: Box): number {
  const dx = Math.max(b.x - (a.x + a.width), a.x - (b.x + b.width));
  const dy = Math.max(b.y - (a.y + a.height), a.y - (b.y + b.height));
  return Math.max(dx, dy);
}

/** The computed styles of `locator` that make a control look the way it does. */
function looks(locator: Locator, properties: readonly string[]): Promise<Record<string, string>> {
  return locator.evaluate((el, names) => {
    const style = getComputedStyle(el);
    return Object.fromEntries(names.map((n) => [n, style.getPropertyValue(n)]));
  }, properties);
}

describe("a phone visitor reads the tables (320 px, JavaScript off)", () => {
  const cases = [
    { table: "#activity", path: () => "/account", what: "the /account activity" },
    { table: "#admin-users", path: () => "/admin", what: "the /admin users" },
    { table: "#admin-sessions", path: () => tomAdminPage, what: "a user's sessions in /admin" },
  ];
  for (const { table, path, what } of cases) {
    it(`sees every column of a row of ${what}, each value labelled with its column, without scrolling sideways`, async () => {
      const phone = await context({ javaScriptEnabled: false, viewport: { width: 320, height: 700 }, storageState: signedIn.ada });
      const page = await phone.newPage();
      await page.goto(`${app.url}${path()}`);
      const headers = await page.locator(`${table} thead th`).allTextContents();
      expect(headers.length).toBeGreaterThanOrEqual(4);
      const cells = page.locator(`${table} tbody tr`).first().locator("td");
      expect(await cells.count()).toBe(headers.length);
      for (let i = 0; i < headers.length; i++) {
        const cell = cells.nth(i);
        const box = await boxOf(cell);
        // Inside the screen, and inside what the table shows (nothing hidden to its side).
        expect.soft(box.width, `${headers[i]}: width`).toBeGreaterThan(0);
        expect.soft(box.x, `${headers[i]}: left edge`).toBeGreaterThanOrEqual(0);
        expect.soft(box.x + box.width, `${headers[i]}: right edge`).toBeLessThanOrEqual(320);
        // The column's name is shown with its value (the header row is not, on a phone).
        const label = await cell.evaluate((el) => getComputedStyle(el, "::before").content);
        expect.soft(label, `${headers[i]}: its label`).toContain(headers[i]!.trim());
      }
      const scroll = await page.locator(table).evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth, page: document.documentElement.scrollWidth }));
      expect(scroll.scrollWidth).toBeLessThanOrEqual(scroll.clientWidth);
      expect(scroll.page).toBeLessThanOrEqual(320);
      // Still a table with its column headers for a screen reader.
      expect(await page.locator(table).evaluate((el) => el.tagName)).toBe("TABLE");
      expect(await page.locator(`${table} th[scope=col]`).count()).toBe(headers.length);
    });
  }

  it("on a wide screen the activity stays a table with its header row", async () => {
    const desk = await context({ javaScriptEnabled: false, viewport: { width: 1280, height: 800 }, storageState: signedIn.ada });
    const page = await desk.newPage();
    await page.goto(`${app.url}/account`);
    expect(await page.locator("#activity thead th").first().isVisible()).toBe(true);
    const [a, b] = [await boxOf(page.locator("#activity tbody tr").first().locator("td").nth(0)), await boxOf(page.locator("#activity tbody tr").first().locator("td").nth(1))];
    // Side by side, on one line.
    expect(Math.abs(a.y - b.y)).toBeLessThan(1);
    expect(b.x).toBeGreaterThan(a.x);
  });
});

describe("the small controls look like the others", () => {
  const BUTTON_LOOK = ["font-family", "font-weight", "border-top-width", "border-top-style", "border-top-color", "border-radius", "background-color", "color", "cursor"] as const;
  const INPUT_LOOK = ["font-family", "font-size", "border-top-width", "border-top-style", "border-top-color", "border-radius", "padding-top", "padding-inline-start", "background-color", "color"] as const;
  for (const colorScheme of ["light", "dark"] as const) {
    it(`a visitor who types a password sees a Show password button styled like the page's other secondary buttons (${colorScheme})`, async () => {
      const page = await (await context({ colorScheme })).newPage();
      await page.goto(`${app.url}/auth/signin`);
      await waitForHydration(page);
      await enterAddress(page, ADA.email);
      const toggle = page.getByRole("button", { name: "Show password" });
      // The header's "Change" (language) is the page's secondary button.
      const secondary = page.locator(".language-menu button");
      expect(await looks(toggle, BUTTON_LOOK)).toEqual(await looks(secondary, BUTTON_LOOK));
      // …and not the browser's own grey button: the brand colour draws its edge.
      const primary = page.locator(`${SIGNIN.credentialsForm} button[type=submit]`);
      expect((await looks(toggle, ["border-top-color"]))["border-top-color"]).toBe((await looks(primary, ["background-color"]))["background-color"]);
      // It stays clear of the field it belongs to.
      expect(separation(await boxOf(toggle), await boxOf(page.locator(SIGNIN.password)))).toBeGreaterThanOrEqual(4);
    });

    it(`an admin sees the /admin search box styled like the other text fields, its button apart from it (${colorScheme})`, async () => {
      const page = await (await context({ colorScheme, javaScriptEnabled: false, storageState: signedIn.ada })).newPage();
      await page.goto(`${app.url}/account`);
      const field = await looks(page.locator("#profile-name-input"), INPUT_LOOK);
      await page.goto(`${app.url}/admin`);
      expect(await looks(page.locator("#admin-q"), INPUT_LOOK)).toEqual(field);
      expect(separation(await boxOf(page.locator("#admin-q")), await boxOf(page.locator("#admin-search button[type=submit]")))).toBeGreaterThanOrEqual(8);
    });
  }
});

describe("actions side by side keep apart", () => {
  for (const width of [320, 1280]) {
    for (const javaScriptEnabled of [false, true]) {
      it(`a new user on the welcome page sees "Continue" and "Go to your account" at least 8 px apart (${width} px, JavaScript ${javaScriptEnabled ? "on" : "off"})`, async () => {
        const page = await (await context({ javaScriptEnabled, viewport: { width, height: 800 }, storageState: signedIn.ada })).newPage();
        await page.goto(`${app.url}/welcome?callbackUrl=%2Faccount`);
        if (javaScriptEnabled) await waitForHydration(page);
        const next = await boxOf(page.getByRole("link", { name: "Continue", exact: true }));
        const account = await boxOf(page.getByRole("link", { name: "Go to your account" }));
        expect(separation(next, account)).toBeGreaterThanOrEqual(8);
      });
    }
  }
});

describe("the passkey sentence about JavaScript", () => {
  /** Holds every script of the app until `release()`: the page as served, before it hydrates. */
  async function holdScripts(page: Page) {
    const held: Route[] = [];
    let open = false;
    await page.route(/\/assets\/.*\.js(\?|$)/, (route) => (open ? route.continue() : void held.push(route)));
    return {
      release: async () => {
        open = true;
        await Promise.all(held.splice(0).map((r) => r.continue()));
      },
    };
  }

  for (const { path, sentence, signed } of [
    { path: "/auth/signin", sentence: "Signing in with a passkey needs JavaScript.", signed: false },
    { path: "/account", sentence: "Adding a passkey needs JavaScript.", signed: true },
  ]) {
    it(`with JavaScript on, a visitor of ${path} never sees "${sentence}", not even before the page hydrates`, async () => {
      const page = await (await context({ storageState: signed ? signedIn.ada : undefined })).newPage();
      const scripts = await holdScripts(page);
      await page.goto(`${app.url}${path}`, { waitUntil: "domcontentloaded" });
      // The document is laid out and painted (the heading is there), the scripts not yet run.
      await page.locator("h1").waitFor();
      expect(await page.locator("html[data-hydrated]").count()).toBe(0);
      expect(await page.getByText(sentence).isVisible()).toBe(false);
      expect(await page.evaluate((s) => document.body.innerText.includes(s), sentence)).toBe(false);
      await scripts.release();
      await waitForHydration(page);
      expect(await page.getByText(sentence).isVisible()).toBe(false);
      expect(await page.evaluate((s) => document.body.innerText.includes(s), sentence)).toBe(false);
    });

    it(`with JavaScript off, a visitor of ${path} reads "${sentence}"`, async () => {
      const page = await (await context({ javaScriptEnabled: false, storageState: signed ? signedIn.ada : undefined })).newPage();
      await page.goto(`${app.url}${path}`);
      expect(await page.getByText(sentence).isVisible()).toBe(true);
    });
  }
});

describe("the setup key and the recovery codes", () => {
  it("with JavaScript, a user setting up an app reads the key in groups of four, copies it and then the recovery codes with Copy buttons, and hears Copied", async () => {
    const device = await context({ storageState: signedIn.tess, permissions: ["clipboard-read", "clipboard-write"] });
    const page = await device.newPage();
    await page.goto(`${app.url}/account`);
    await waitForHydration(page);
    await page.locator("#totp-start-form [type=submit]").click();
    const key = page.locator("[data-totp-secret]");
    const secret = (await key.getAttribute("data-totp-secret"))!;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const shown = (await key.innerText()).trim();
    expect(shown).toBe(secret.match(/.{1,4}/g)!.join(" "));
    await waitForHydration(page);
    const setup = page.locator("#totp-setup");
    await setup.getByRole("button", { name: "Copy key" }).click();
    // The clipboard answers when it answers: wait for the status to speak, then read it.
    await setup.getByRole("status").filter({ hasText: "Copied" }).waitFor();
    await expect(setup.getByRole("status").innerText()).resolves.toBe("Copied");
    // The copied value has no spaces.
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

    await page.locator("#totp-confirm-code").fill(totpCodeAt(secret, totpStep(new Date())));
    await page.locator("#totp-confirm-code-form [type=submit]").click();
    const codes = page.locator("#recovery-codes");
    await codes.locator("[data-recovery-code]").first().waitFor();
    const list = await codes.locator("[data-recovery-code]").evaluateAll((els) => els.map((e) => e.getAttribute("data-recovery-code")!));
    expect(list.length).toBeGreaterThan(0);
    await codes.getByRole("button", { name: "Copy codes" }).click();
    // The status is spoken once the clipboard has the codes: wait for it, then there is one.
    await codes.getByRole("status").filter({ hasText: "Copied" }).waitFor();
    await expect(codes.getByRole("status").filter({ hasText: "Copied" }).count()).resolves.toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(list.join("\n"));
  });

  it("the Copy button speaks the page's language", async () => {
    const page = await (await context({ locale: "de-DE", storageState: signedIn.ada })).newPage();
    await page.goto(`${app.url}/account`);
    await waitForHydration(page);
    await page.locator("#totp-start-form [type=submit]").click();
    await page.locator("#totp-setup").getByRole("button", { name: "Schlüssel kopieren" }).waitFor();
  });

  it("without JavaScript, the key is in groups and no Copy button is there to do nothing", async () => {
    const page = await (await context({ javaScriptEnabled: false, storageState: signedIn.ada })).newPage();
    await page.goto(`${app.url}/account`);
    await page.locator("#totp-start-form [type=submit]").click();
    const key = page.locator("[data-totp-secret]");
    const secret = (await key.getAttribute("data-totp-secret"))!;
    expect((await key.innerText()).trim()).toBe(secret.match(/.{1,4}/g)!.join(" "));
    expect(await page.getByRole("button", { name: /Copy/ }).count()).toBe(0);
  });
});

describe("destructive buttons", () => {
  /** The intents whose button ends, removes or turns something off. */
  const DESTRUCTIVE = {
    "/account": ["totp-disable", "revoke-session", "revoke-others", "revoke-all", "password-remove", "account-delete", "passkey-remove", "unlink-account"],
    admin: ["disable", "second-factor-off", "delete", "end-sessions"],
  };
  const luminance = (rgb: string) => {
    const [r, g, b] = rgb.match(/[\d.]+/g)!.slice(0, 3).map((v) => {
      const s = Number(v) / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const contrast = (a: string, b: string) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi! + 0.05) / (lo! + 0.05);
  };

  for (const colorScheme of ["light", "dark"] as const) {
    it(`a user with the second factor on, and an admin on her page, see every destructive button in one danger style, unlike the primary one (${colorScheme})`, async () => {
      const pages = [
        { user: signedIn.tom, path: "/account", intents: DESTRUCTIVE["/account"], primary: "#profile-form [type=submit]" },
        { user: signedIn.ada, path: tomAdminPage, intents: DESTRUCTIVE.admin, primary: null },
      ];
      const styles: { where: string; background: string; color: string }[] = [];
      let primary: string | null = null;
      for (const { user, path, intents, primary: primarySelector } of pages) {
        const page = await (await context({ colorScheme, javaScriptEnabled: false, storageState: user })).newPage();
        await page.goto(`${app.url}${path}`);
        if (primarySelector) primary = (await looks(page.locator(primarySelector), ["background-color"]))["background-color"]!;
        for (const intent of intents) {
          const buttons = page.locator(`form:has(input[name=intent][value="${intent}"]) button[type=submit]`);
          for (const button of await buttons.all()) {
            const look = await looks(button, ["background-color", "color"]);
            styles.push({ where: `${path} ${intent}`, background: look["background-color"]!, color: look.color! });
          }
        }
      }
      // Present on these pages: the second factor's "Turn off", the sessions', the deletions.
      const where = styles.map((s) => s.where.split(" ").at(-1));
      expect(where).toEqual(expect.arrayContaining(["totp-disable", "revoke-session", "revoke-all", "account-delete", "disable", "second-factor-off", "delete", "end-sessions"]));
      const danger = styles.find((s) => s.where.endsWith("account-delete"))!;
      for (const s of styles) expect.soft({ where: s.where, background: s.background, color: s.color }).toEqual({ where: s.where, background: danger.background, color: danger.color });
      expect(danger.background).not.toBe(primary);
      expect(contrast(danger.background, danger.color)).toBeGreaterThanOrEqual(4.5);
    });
  }
});

describe("addresses in a right-to-left page", () => {
  it("an Arabic visitor types the e-mail address left to right, from the left edge, under a right-to-left label", async () => {
    const page = await (await context({ locale: "ar", javaScriptEnabled: false })).newPage();
    await page.goto(`${app.url}/auth/signin`);
    const input = await looks(page.locator(SIGNIN.addressInput), ["direction", "text-align"]);
    expect(input.direction).toBe("ltr");
    expect(["left", "start"]).toContain(input["text-align"]);
    const label = await looks(page.locator(`label[for="${SIGNIN.addressInput.slice(1)}"]`), ["direction"]);
    expect(label.direction).toBe("rtl");
  });

  it("an Arabic user types the authenticator's code left to right too", async () => {
    const page = await (await context({ locale: "ar", javaScriptEnabled: false, storageState: signedIn.ada })).newPage();
    await page.goto(`${app.url}/account`);
    await page.locator("#totp-start-form [type=submit]").click();
    const input = await looks(page.locator("#totp-confirm-code"), ["direction", "text-align"]);
    expect(input.direction).toBe("ltr");
    expect(["left", "start"]).toContain(input["text-align"]);
  });
});

describe("beyond the list: a phone in Arabic", () => {
  it("an Arabic admin on a 320 px phone reads a user's details with the values at least half the list wide, not a letter a line", async () => {
    const page = await (await context({ locale: "ar", javaScriptEnabled: false, viewport: { width: 320, height: 700 }, storageState: signedIn.ada })).newPage();
    await page.goto(`${app.url}${tomAdminPage}`);
    const list = await boxOf(page.locator("#admin-profile"));
    for (const value of await page.locator("#admin-profile dd").all()) {
      expect.soft((await boxOf(value)).width).toBeGreaterThanOrEqual(list.width / 2);
    }
  });

  it("an admin on a 320 px phone sees the role's label, its menu and its button apart", async () => {
    const page = await (await context({ locale: "ar", javaScriptEnabled: false, viewport: { width: 320, height: 700 }, storageState: signedIn.ada })).newPage();
    await page.goto(`${app.url}${tomAdminPage}`);
    const form = page.locator("#admin-set-role");
    const [label, select, button] = [await boxOf(form.locator("label")), await boxOf(form.locator("select")), await boxOf(form.locator("button[type=submit]"))];
    expect(separation(label, select)).toBeGreaterThanOrEqual(8);
    expect(separation(select, button)).toBeGreaterThanOrEqual(8);
  });
});

describe("the look comes from the theme's custom properties (app/theme.css)", () => {
  for (const colorScheme of ["light", "dark"] as const) {
    it(`a visitor sees the buttons, links and logo change when one property of the theme changes (${colorScheme})`, async () => {
      const page = await (await context({ colorScheme })).newPage();
      await page.goto(`${app.url}/auth/signin`);
      await waitForHydration(page);
      // Step one's Continue: the page's primary button.
      const primary = page.locator(`${SIGNIN.addressForm} button[type=submit]`);
      const brand = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--brand").trim());
      expect(brand).toMatch(/^#[0-9a-f]{6}$/);
      // The theme's logo before the site's name in the header: a file of public/ that loads.
      const logo = await page.locator(".site-header .brand").evaluate((el) => getComputedStyle(el, "::before").backgroundImage);
      expect(logo).toMatch(/^url\(".*\/logo\.png"\)$/);
      expect((await page.request.get(`${app.url}/logo.png`)).headers()["content-type"]).toBe("image/png");
      // One property changed on the page: every place that draws the brand follows it.
      await page.evaluate(() => document.documentElement.style.setProperty("--brand", "rgb(1, 2, 3)"));
      expect((await looks(primary, ["background-color"]))["background-color"]).toBe("rgb(1, 2, 3)");
      expect((await looks(page.locator(".language-menu button"), ["border-top-color"]))["border-top-color"]).toBe("rgb(1, 2, 3)");
      await page.evaluate(() => document.documentElement.style.setProperty("--font", "monospace"));
      expect((await looks(page.locator("body"), ["font-family"]))["font-family"]).toBe("monospace");
    });
  }
});
