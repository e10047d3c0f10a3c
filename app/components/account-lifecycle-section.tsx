import { Form, useNavigation } from "react-router";
import { ACCOUNT_SECTION, ACCOUNT_FORM_ACTION } from "./account-sections";
import { useT } from "~/i18n/react";
import { CsrfField, Field } from "./auth-forms";

type Props = { csrfToken: string; deleteWord: string; confirmError: string | null };

/** /account: download a copy of the account's data, and delete the account (ADR 086). */
export function AccountLifecycleSection({ csrfToken, deleteWord, confirmError }: Props) {
  const t = useT();
  const navigation = useNavigation();
  const deleting = navigation.state !== "idle" && navigation.formData?.get("intent") === "account-delete";
  return (
    <>
      <section className="card" aria-labelledby="export-heading">
        <h2 id="export-heading">{t("lifecycle.exportHeading")}</h2>
        <p className="muted">{t("lifecycle.exportIntro")}</p>
        {/* A document form, never a fetch: the answer is a file the browser saves. */}
        <form method="post" action={ACCOUNT_FORM_ACTION} id="account-export-form">
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="account-export" />
          <button type="submit" className="button inline">
            {t("lifecycle.exportButton")}
          </button>
        </form>
      </section>

      <section className="card" aria-labelledby="delete-heading" id={ACCOUNT_SECTION.deleteAccount}>
        <h2 id="delete-heading">{t("lifecycle.deleteHeading")}</h2>
        <p>{t("lifecycle.deleteIntro")}</p>
        <Form method="post" action={ACCOUNT_FORM_ACTION} id="account-delete-form">
          <CsrfField token={csrfToken} />
          <input type="hidden" name="intent" value="account-delete" />
          <DeleteWordField id="account-delete-confirm" word={deleteWord} error={confirmError} />
          <button type="submit" className="button inline danger" aria-disabled={deleting || undefined}>
            {t("lifecycle.deleteButton")}
          </button>
        </Form>
      </section>
    </>
  );
}

/**
 * The field a deletion asks the shown word in (ADR 086): the owner's on /account and the admin's on
 * /admin. Not a credential: no autofill, no spelling fixes, capitals as the word is shown.
 */
export function DeleteWordField({ id, word, error }: { id: string; word: string; error?: string | null }) {
  const t = useT();
  return (
    <Field
      id={id}
      // The word to type set apart from the sentence around it: a key-like box, left to right.
      label={t.rich("lifecycle.deleteConfirmLabel", { word: <kbd className="type-this">{word}</kbd> })}
      name="confirm"
      type="text"
      autoComplete="off"
      autoCapitalize="characters"
      spellCheck={false}
      required
      error={error}
    />
  );
}
