// The show-password control (docs/decisions/084): a toggle button beside a
// password input that switches it between type=password and type=text. It exists only once the
// page is interactive — rendered after hydration, never in the server's HTML — so without
// JavaScript there is no button that would do nothing. Every password input uses it through
// Field (auth-forms.tsx); a page with its own <input type="password"> uses usePasswordShown and
// ShowPasswordButton the same way.
import { useEffect, useState, useSyncExternalStore } from "react";
import { useT } from "~/i18n/react";

const subscribe = () => () => {};
/** False in the server's HTML and during hydration; true once React runs in the browser. */
export function useInteractive(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
}

/** The input's shown state and its type: "text" while shown, "password" otherwise. */
export function usePasswordShown() {
  const [shown, setShown] = useState(false);
  return { shown, type: shown ? "text" : "password", toggle: () => setShown((s) => !s), hide: () => setShown(false) };
}

/**
 * The toggle for the input `controls` (its id). A button with a fixed label ("Show password") and
 * aria-pressed saying whether the password is shown, so a screen reader announces the state.
 */
export function ShowPasswordButton({ controls, shown, onToggle, onHide }: { controls: string; shown: boolean; onToggle: () => void; onHide: () => void }) {
  const t = useT();
  const interactive = useInteractive();
  // A shown password is hidden again as its form is submitted: the answer (a refusal re-renders
  // the same page) does not show it to whoever stands behind, and the browser does not keep the
  // value of a plain text field in its form history. Set on the element at once, before any
  // submit handler reads the form; the state follows.
  useEffect(() => {
    const input = document.getElementById(controls);
    const form = input instanceof HTMLInputElement ? input.form : null;
    if (!shown || !form || !(input instanceof HTMLInputElement)) return;
    const hide = () => {
      input.type = "password";
      onHide();
    };
    form.addEventListener("submit", hide, { capture: true });
    return () => form.removeEventListener("submit", hide, { capture: true });
  }, [controls, shown, onHide]);
  if (!interactive) return null;
  return (
    <button type="button" className="button secondary inline show-password" aria-controls={controls} aria-pressed={shown} onClick={onToggle} data-show-password-for={controls}>
      {t("passwordField.show")}
    </button>
  );
}
