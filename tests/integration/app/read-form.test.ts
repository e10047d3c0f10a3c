// readForm (~/auth): a form's fields are strings or absent, whether the body was URL-encoded or
// JSON, so an app's action types `(form.text ?? "").trim()` without a cast (issue 33).
import { expect, expectTypeOf, it } from "vitest";
import { readForm, type FormFields } from "../../../app/auth/index.ts";
import { ORIGIN } from "../../support/http.ts";

const posted = (body: string, type: string) => new Request(`${ORIGIN}/notes`, { method: "POST", headers: { "Content-Type": type }, body });

it("reads a URL-encoded form as strings, a field not sent as undefined", async () => {
  const form = await readForm(posted("text=+a+note+&csrfToken=t&text2=", "application/x-www-form-urlencoded"));
  expectTypeOf(form).toEqualTypeOf<FormFields>();
  expectTypeOf(form.text).toEqualTypeOf<string | undefined>();
  const text: string = (form.text ?? "").trim();
  expect(text).toBe("a note");
  expect(form).toEqual({ text: " a note ", csrfToken: "t", text2: "" });
  expect(form.missing).toBeUndefined();
});

it("reads a JSON body's numbers and booleans as a form's text, and leaves out what a form cannot send", async () => {
  const form = await readForm(posted(JSON.stringify({ text: "hi", count: 2, done: false, none: null, list: ["a"], nested: { a: 1 } }), "application/json"));
  expect(form).toEqual({ text: "hi", count: "2", done: "false" });
});

it("throws the 415 a body of another type gets", async () => {
  const thrown = await readForm(posted("hi", "text/plain")).catch((e: unknown) => e);
  expect(thrown).toBeInstanceOf(Response);
  expect((thrown as Response).status).toBe(415);
});
