import { describe, expect, it } from "vitest";
import { errorPage, signinErrorMessage } from "../../../app/auth/core/messages.server";

describe("error catalogue", () => {
  it.each([
    ["Signin", "Try signing in with a different account."],
    ["OAuthSignin", "Try signing in with a different account."],
    ["OAuthCallback", "Try signing in with a different account."],
    ["OAuthCreateAccount", "Try signing in with a different account."],
    ["EmailCreateAccount", "Try signing in with a different account."],
    ["Callback", "Try signing in with a different account."],
    ["OAuthAccountNotLinked", "To confirm your identity, sign in with the same account you used originally."],
    ["EmailSignin", "The e-mail could not be sent."],
    ["CredentialsSignin", "Sign in failed. Check the details you provided are correct."],
    ["SessionRequired", "Please sign in to access this page."],
    ["MissingCSRF", "Unable to sign in."],
    ["<script>", "Unable to sign in."],
    ["toString", "Unable to sign in."],
  ])("%s → %s", (code, message) => {
    expect(signinErrorMessage(code)).toBe(message);
  });

  it("gives the error pages their statuses", () => {
    expect(errorPage("Configuration").status).toBe(500);
    expect(errorPage("AccessDenied").status).toBe(403);
    expect(errorPage("Verification")).toMatchObject({ status: 403, message: "The sign-in link is no longer valid." });
    expect(errorPage("constructor").status).toBe(200);
    expect(errorPage(null).status).toBe(200);
  });

  describe("RateLimited (Too many attempts. Try again in <N> minutes.)", () => {
    const rateLimited = (query: string) => signinErrorMessage("RateLimited", new URLSearchParams(query));

    it.each([
      ["minutes=15", "Too many attempts. Try again in 15 minutes."],
      ["minutes=60", "Too many attempts. Try again in 60 minutes."],
      ["minutes=2", "Too many attempts. Try again in 2 minutes."],
      // English wants the singular for one; N stays the limit's number.
      ["minutes=1", "Too many attempts. Try again in 1 minute."],
    ])("%s → %s", (query, message) => {
      expect(rateLimited(query)).toBe(message);
    });

    it.each(["", "minutes=", "minutes=0", "minutes=-5", "minutes=1.5", "minutes=abc", "minutes=01", "minutes=9999999", "minutes=<b>"])(
      "%j (no sane number) → the same sentence without one",
      (query) => {
        expect(rateLimited(query)).toBe("Too many attempts. Try again later.");
      },
    );

    it("says the same without any parameters at all", () => {
      expect(signinErrorMessage("RateLimited")).toBe("Too many attempts. Try again later.");
    });
  });
});

