// One button that posts one intent of a page's action with its hidden fields (the organization
// page's sections: remove, verify, rotate …), a plain form that works without JavaScript.
import { Form } from "react-router";
import { CsrfField } from "./auth-forms";

export function IntentForm({ csrfToken, intent, fields, label, danger, id }: { csrfToken: string; intent: string; fields: Record<string, string>; label: string; danger?: boolean; id?: string }) {
  return (
    <Form method="post" reloadDocument id={id}>
      <CsrfField token={csrfToken} />
      <input type="hidden" name="intent" value={intent} />
      {Object.entries(fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <button type="submit" className={danger ? "button danger inline" : "button secondary inline"}>
        {label}
      </button>
    </Form>
  );
}
