// The sign-in page's two-step form (ADR 087) as a visitor fills it, in one
// place for every browser and deploy test: step one takes the address and "Continue", step two
// the password or the e-mail link. It works with JavaScript on (the page swaps in place) and off
// (two pages), in every language: it finds the fields by id, never by their words.
import type { Page } from "playwright-core";

/** Step one's field and step two's read-only address, the password and the forms' buttons. */
export const SIGNIN = {
  addressForm: "#address-form",
  addressInput: "#input-address",
  shownAddress: "#signin-address",
  change: "#signin-change",
  credentialsForm: "#credentials-form",
  password: "#input-password-for-credentials-provider",
  emailForm: "#email-form",
} as const;

/**
 * Step one: types `email` and continues; settles once step two shows that address (a new page
 * without JavaScript, the same page with it). From step two for another address, "change" first.
 */
export async function enterAddress(page: Page, email: string): Promise<void> {
  if ((await page.locator(SIGNIN.addressInput).count()) === 0) {
    await page.locator(SIGNIN.change).click();
    await page.locator(SIGNIN.addressInput).waitFor();
  }
  await page.locator(SIGNIN.addressInput).fill(email);
  await page.locator(`${SIGNIN.addressForm} button[type="submit"]`).click();
  await page.locator(SIGNIN.shownAddress).waitFor();
}

/** Step two's password form: types `password` and submits it (the answer is the caller's to wait for). */
export async function submitPassword(page: Page, password: string): Promise<void> {
  await page.locator(SIGNIN.password).fill(password);
  await page.locator(`${SIGNIN.credentialsForm} button[type="submit"]`).click();
}

/**
 * Signs in with a password on the sign-in page already open in `page`: the address, then the
 * password. Does not wait for where it lands (the account, the second factor, a refusal).
 */
export async function signInWithPassword(page: Page, email: string, password: string): Promise<void> {
  await enterAddress(page, email);
  await submitPassword(page, password);
}

/** Asks for an e-mail sign-in link and code for `email` on the open sign-in page; waits for the verify-request page. */
export async function requestEmailSignIn(page: Page, email: string): Promise<void> {
  await enterAddress(page, email);
  await page.locator(`${SIGNIN.emailForm} button[type="submit"]`).click();
  await page.waitForURL(/\/auth\/verify-request/);
}
