// A refused /account form sends a browser back to the page (Post/Redirect/Get): these steps follow
// that redirect through the page's loader and read the refusal it shows, in the shape the form's
// own answer had (the JSON client's), so a test can say what was refused either way.
import { expect } from "vitest";
import * as account from "../../app/routes/account.tsx";
import { callRoute, CookieJar, get } from "./http.ts";

export type AccountRefusal = { formError: string | null; fieldErrors: Record<string, string> };

/** The refusal a redirect back to /account names, as the page shows it; the answer itself when it is not a redirect. */
export async function accountRefusal(res: Response, jar: CookieJar): Promise<AccountRefusal> {
  if (res.status !== 303) return (await res.json()) as AccountRefusal;
  const location = res.headers.get("Location") ?? "";
  expect(location).toMatch(/^\/account\?refused=\w+&intent=[\w-]+(&[\w=%-]+)*#[\w-]+-notice$/);
  const page = await callRoute(account.loader, get(location, { jar }));
  jar.apply(page);
  const { refusal } = (await page.json()) as { refusal: { field: string; message: string } | null };
  expect(refusal).not.toBeNull();
  return { formError: null, fieldErrors: { [refusal!.field]: refusal!.message } };
}
