import { useState, type FormEvent, type ReactNode, type Ref } from "react";
import { Form } from "react-router";
import { PageTitle } from "~/components/site-name";
import { ShowPasswordButton, usePasswordShown } from "./show-password";

export function CsrfField({ token }: { token: string }) {
  return <input type="hidden" name="csrfToken" value={token} />;
}

/**
 * A form that leaves the page on submit (the sign-in legs set cookies and may go to another
 * site), so it is a full document POST with or without JavaScript. With JavaScript the button
 * shows progress and cannot be pressed twice.
 */
export function DocumentForm({
  action,
  pendingLabel,
  label,
  children,
  className,
  id,
  buttonRef,
  inline = false,
}: {
  action: string;
  label: string;
  pendingLabel: string;
  children?: ReactNode;
  className?: string;
  id?: string;
  /** For a page that moves the focus to the button (the sign-in page's second step). */
  buttonRef?: Ref<HTMLButtonElement>;
  /** A button as wide as its words, like the other buttons of /account (the sign-in pages' fill their card). */
  inline?: boolean;
}) {
  const [pending, setPending] = useState(false);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    if (pending) event.preventDefault();
    else setPending(true);
  };
  return (
    <Form method="post" action={action} reloadDocument onSubmit={onSubmit} className={className} id={id}>
      {children}
      <button type="submit" className={inline ? "button inline" : "button"} aria-disabled={pending || undefined} ref={buttonRef}>
        {pending ? pendingLabel : label}
      </button>
    </Form>
  );
}

/**
 * A labelled input. A refused value is marked invalid and described by its message; the message
 * is an alert, read out when it appears after a submission in the page, and the field takes the
 * focus when the refusal arrives as a new page (JavaScript off), so reading starts there.
 */
export function Field({
  id,
  label,
  error,
  ...input
}: { id: string; label: ReactNode; error?: ReactNode; ref?: Ref<HTMLInputElement> } & React.InputHTMLAttributes<HTMLInputElement>) {
  const errorId = `${id}-error`;
  // A password input gets the show-password control (JavaScript only, ADR 084).
  const password = usePasswordShown();
  const isPassword = input.type === "password";
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? errorId : undefined}
        autoFocus={error ? true : undefined}
        {...input}
        type={isPassword ? password.type : (input.type ?? "text")}
      />
      {isPassword ? <ShowPasswordButton controls={id} shown={password.shown} onToggle={password.toggle} onHide={password.hide} /> : null}
      {error ? (
        <p className="field-error" id={errorId} role="alert" data-error-for={input.name}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/**
 * The card of the sign-in pages and their kin. Its heading is also the document's <title>, so
 * the two never disagree whichever state (form, refusal, success) the page shows.
 */
export function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth-page">
      <PageTitle page={title} />
      <section className="card" aria-labelledby="card-title">
        <h1 id="card-title">{title}</h1>
        {children}
      </section>
    </main>
  );
}
