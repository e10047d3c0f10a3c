// ~/auth/react's useSession(): a page of the app reads who is signed in from the root loader's
// session (the data the page already has), never "loading", with no request of its own. Rendered
// from the real root loader's data, on both session strategies.
import { renderToString } from "react-dom/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as root from "../../../app/root";
import { SessionProvider, useSession } from "../../../app/auth/react";
import { createUser, signIn, withEnv } from "../../support/auth";
import { callRoute, CookieJar, get, post } from "../../support/http";
import * as signoutRoute from "../../../app/routes/auth/signout";

function ShowSession() {
  const { data, status } = useSession();
  return <p>{`${status}:${data?.user.email ?? "-"}:${data?.expires ? "expires" : "-"}`}</p>;
}

/** The page as the server renders it from the root loader's data for `jar`'s visitor. */
async function renderWithRootData(jar: CookieJar): Promise<string> {
  const loaderData = await (await callRoute(root.loader, get("/", { jar }))).json();
  return renderToString(
    <SessionProvider session={loaderData.session}>
      <ShowSession />
    </SessionProvider>,
  );
}

let undoEnv: (() => void) | null = null;
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
});

describe.each(["jwt", "database"])("useSession() from ~/auth/react (%s sessions)", (strategy) => {
  it("a signed-in visitor's page shows their address at once, from the root loader's session, asking nothing of the network", async () => {
    undoEnv = withEnv({ AUTH_SESSION_STRATEGY: strategy });
    await createUser(`ada-${strategy}@example.com`, "Ada");
    const { jar } = await signIn(new CookieJar(), `ada-${strategy}@example.com`);
    const fetched = vi.spyOn(globalThis, "fetch");
    try {
      const html = await renderWithRootData(jar);
      expect(html).toContain(`authenticated:ada-${strategy}@example.com:expires`);
      expect(fetched).not.toHaveBeenCalled();
    } finally {
      fetched.mockRestore();
    }
  });

  it("a visitor who is not signed in reads 'unauthenticated', never 'loading'", async () => {
    undoEnv = withEnv({ AUTH_SESSION_STRATEGY: strategy });
    expect(await renderWithRootData(new CookieJar())).toContain("unauthenticated:-:-");
  });

  it("after signing out, the root loader's data (what revalidation reloads) reads 'unauthenticated'", async () => {
    undoEnv = withEnv({ AUTH_SESSION_STRATEGY: strategy });
    await createUser(`bo-${strategy}@example.com`, "Bo");
    const { jar, csrfToken } = await signIn(new CookieJar(), `bo-${strategy}@example.com`);
    expect(await renderWithRootData(jar)).toContain(`authenticated:bo-${strategy}@example.com`);
    jar.apply(await callRoute(signoutRoute.action, post("/auth/signout", { csrfToken }, { jar })));
    expect(await renderWithRootData(jar)).toContain("unauthenticated:-:-");
  });
});

describe("useSession() outside the root layout", () => {
  it("says where it must be used instead of reading nothing", () => {
    expect(() => renderToString(<ShowSession />)).toThrow(/root layout/);
  });
});
