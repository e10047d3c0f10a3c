// The organization page on a 320 px phone, in Arabic and English, JavaScript off (the visitor's walk
// of issue 32): the members table keeps each person's name, address and "you" badge together in the
// value column, the badge its own size, the buttons whole words; the policy form's break-glass
// legend sits inside its border, its minute fields look like the other fields.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { connectBrowser, newContext, startApp, type RunningApp } from "../support/browser";
import { signInWithPassword } from "../support/signin-form";
import { seedUser, withServerDatabase } from "../support/seed-user";

const OWNER = { email: "u6@example.com", password: "correct horse battery", name: "Owner", verified: true };
const OTHER = { email: "second.member@example.com", password: "correct horse battery", name: "مستخدم u5", verified: true };

let browser: Browser;
let app: RunningApp;
let signedIn: Awaited<ReturnType<BrowserContext["storageState"]>>;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [browser, app] = await Promise.all([connectBrowser(), startApp({ AUTH_ORGANIZATIONS: "true" })]);
  await seedUser(app, OWNER);
  await seedUser(app, OTHER);
  const context = await newContext(browser, { javaScriptEnabled: false });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${app.url}/auth/signin?callbackUrl=%2Forgs%2Fnew`);
  await signInWithPassword(page, OWNER.email, OWNER.password);
  await page.waitForURL(`${app.url}/orgs/new`);
  await page.locator("#org-name").fill("Amal");
  await page.locator("#org-slug").fill("amal");
  await page.getByRole("button", { name: "Create the organization" }).click();
  await page.waitForURL(/\/orgs\/amal\?done=created/);
  await withServerDatabase(app, async (db) => {
    const org = await db.organization.findUniqueOrThrow({ where: { slug: "amal" } });
    const other = await db.user.findUniqueOrThrow({ where: { email: OTHER.email } });
    await db.membership.create({ data: { organizationId: org.id, userId: other.id, role: "member" } });
  });
  signedIn = await context.storageState();
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => {});
  await browser?.close();
  await app?.stop();
});

async function phone(locale: string): Promise<Page> {
  const context = await newContext(browser, { locale, javaScriptEnabled: false, viewport: { width: 320, height: 800 }, storageState: signedIn });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${app.url}/orgs/amal`);
  return page;
}

type Box = { x: number; y: number; width: number; height: number };
const box = async (page: Page, selector: string): Promise<Box> => (await page.locator(selector).first().boundingBox())!;

describe("the organization page on a 320 px phone", () => {
  for (const locale of ["ar", "en"]) {
    it(`(${locale}) the members table keeps the name, address and badge in the value column, the badge its own size, the buttons whole words`, async () => {
      const page = await phone(locale);
      const me = page.locator("#members tr", { has: page.locator(".badge") }).first();
      const cell = me.locator("td").first();
      const value = await cell.locator(".cell-value").boundingBox();
      const address = await cell.locator(".ltr").first().boundingBox();
      const badge = await cell.locator(".badge").boundingBox();
      // The address and the badge lie inside the value box, which is the column after the label.
      for (const part of [address!, badge!]) {
        expect(part.x).toBeGreaterThanOrEqual(value!.x - 1);
        expect(part.x + part.width).toBeLessThanOrEqual(value!.x + value!.width + 1);
      }
      // The badge is the size of its word: one line high, not a stretched oval.
      expect(badge!.height).toBeLessThan(30);
      const badgeWords = await cell.locator(".badge").evaluate((el) => {
        const range = document.createRange();
        range.selectNodeContents(el);
        return range.getBoundingClientRect().width;
      });
      expect(badge!.width).toBeLessThan(badgeWords + 30);
      // The address: on at most two lines (its own column, not squeezed into the label's).
      expect(address!.height).toBeLessThan(50);
      // Every button of the table is at least as wide as its longest word: no word broken.
      const buttons = await page.locator("#members .button").evaluateAll((els) =>
        els.map((el) => {
          const b = el as HTMLElement;
          const width = b.getBoundingClientRect().width;
          const { width: oldWidth, overflowWrap, wordBreak } = b.style;
          b.style.width = "min-content";
          b.style.overflowWrap = "normal";
          b.style.wordBreak = "normal";
          const longestWord = b.getBoundingClientRect().width;
          Object.assign(b.style, { width: oldWidth, overflowWrap, wordBreak });
          return { text: b.textContent, width, longestWord };
        }),
      );
      expect(buttons.length).toBeGreaterThan(0);
      for (const b of buttons) expect(b.width, b.text ?? "").toBeGreaterThanOrEqual(b.longestWord - 1);
    });

    it(`(${locale}) the policy form's break-glass legend sits inside its border and the minute fields look like the other fields`, async () => {
      const page = await phone(locale);
      const fieldset = await box(page, "#org-policy-form fieldset");
      const legend = await box(page, "#org-policy-form fieldset legend");
      // Wholly below the fieldset's top border.
      expect(legend.y).toBeGreaterThan(fieldset.y + 1);
      expect(legend.y + legend.height).toBeLessThan(fieldset.y + fieldset.height);
      const looks = (selector: string) =>
        page.locator(selector).evaluate((el) => {
          const s = getComputedStyle(el);
          return { border: s.borderTopWidth + " " + s.borderTopStyle + " " + s.borderTopColor, padding: s.paddingTop, radius: s.borderTopLeftRadius, height: Math.round(el.getBoundingClientRect().height) };
        });
      const minutes = await looks("#policy-idle");
      const text = await looks("#invite-email");
      expect(minutes).toEqual(text);
      // The service's limit in words, not a count of minutes.
      await expect(page.locator("label[for=policy-idle]").textContent()).resolves.not.toMatch(/\d{4}/);
    });
  }
});
