// The sign-in page as the server renders it: which text a refusal shows, and under which form.
import { renderToString } from "react-dom/server";
import { createRoutesStub } from "react-router";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as signinRoute from "../../../app/routes/auth/signin";
import { withEnv } from "../../support/auth";
import { resetDatabase } from "../../support/db";
import { callRoute, get } from "../../support/http";

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
  it("shows the contract's one text with the minutes, and nothing else", async () => {
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
