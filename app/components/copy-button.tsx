// A "Copy" button for what a person would otherwise select by hand (the authenticator's setup key,
// the recovery codes). It copies `value` to the clipboard and says "Copied" in a status region,
// which screen readers announce. It exists only once the page runs in a browser that has a
// clipboard to write to (rendered after hydration, like the show-password toggle), so without
// JavaScript there is no button that would do nothing: the text is there to select.
import { useState, useSyncExternalStore } from "react";
import { useT } from "~/i18n/react";
import { useInteractive } from "./show-password";

const subscribe = () => () => {};
/** Whether this browser lets the page write to the clipboard (a secure context); false on the server. */
function useClipboard(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => typeof navigator.clipboard?.writeText === "function",
    () => false,
  );
}

export function CopyButton({ value, label }: { value: string; label: string }) {
  const t = useT();
  const interactive = useInteractive();
  const clipboard = useClipboard();
  const [said, setSaid] = useState<"copied" | "failed" | null>(null);
  if (!interactive || !clipboard) return null;
  const copy = async () => {
    setSaid(null);
    try {
      await navigator.clipboard.writeText(value);
      setSaid("copied");
    } catch {
      // Refused (no permission, the page not focused): the text is still there to select.
      setSaid("failed");
    }
  };
  return (
    <div className="copy">
      <button type="button" className="button secondary inline" onClick={copy}>
        {label}
      </button>
      {/* Always in the page, so the words put in it are announced. */}
      <span role="status" className={said === "failed" ? "field-error" : "muted"}>
        {said === "copied" ? t("common.copied") : said === "failed" ? t("common.copyFailed") : null}
      </span>
    </div>
  );
}
