// The Policy section of /orgs/<slug> (docs/features/organizations.md#policy): one form, every
// field of the policy at once, for admins and owners. Works without JavaScript; every word from
// the catalogue; the refusal is announced beside the page's forms (organizations.tsx).
import { Form } from "react-router";
import { useT } from "~/i18n/react";
import { CsrfField, Field } from "./auth-forms";

export type PolicyData = {
  policy: { requireSso: boolean; breakGlassOwners: string[]; requireMfa: boolean; sessionIdleMinutes: number | null; sessionAbsoluteMinutes: number | null };
  owners: { userId: string; label: string }[];
  limits: { idle: number; absolute: number | null };
  /** The same limits in words ("30 days"). */
  limitsText: { idle: string; absolute: string | null };
  breakGlassMax: number;
  breakGlassField: string;
};

export function PolicySection({ csrfToken, data }: { csrfToken: string; data: PolicyData | null }) {
  const t = useT();
  if (!data) return null;
  const { policy } = data;
  return (
    <section className="card" aria-labelledby="policy-heading" id="policy">
      <h2 id="policy-heading">{t("org.policy.title")}</h2>
      <p>{t("org.policy.intro")}</p>
      <Form method="post" reloadDocument id="org-policy-form">
        <CsrfField token={csrfToken} />
        <input type="hidden" name="intent" value="policy" />
        <div className="field">
          <label>
            <input type="checkbox" name="requireSso" defaultChecked={policy.requireSso} /> {t("org.policy.requireSso")}
          </label>
        </div>
        <fieldset className="field choices">
          <legend>{t("org.policy.breakGlass")}</legend>
          {data.owners.map((o) => (
            <label key={o.userId} className="checkbox-row">
              <input type="checkbox" name={`${data.breakGlassField}${o.userId}`} defaultChecked={policy.breakGlassOwners.includes(o.userId)} /> {o.label}
            </label>
          ))}
        </fieldset>
        <div className="field">
          <label>
            <input type="checkbox" name="requireMfa" defaultChecked={policy.requireMfa} /> {t("org.policy.requireMfa")}
          </label>
        </div>
        <Field
          id="policy-idle"
          name="sessionIdleMinutes"
          type="number"
          inputMode="numeric"
          min={1}
          max={data.limits.idle}
          step={1}
          label={t("org.policy.idle", { max: data.limitsText.idle })}
          defaultValue={policy.sessionIdleMinutes ?? ""}
        />
        <Field
          id="policy-absolute"
          name="sessionAbsoluteMinutes"
          type="number"
          inputMode="numeric"
          min={1}
          max={data.limits.absolute ?? undefined}
          step={1}
          label={t("org.policy.absolute", { max: data.limitsText.absolute ?? t("org.policy.noLimit") })}
          defaultValue={policy.sessionAbsoluteMinutes ?? ""}
        />
        <button type="submit" className="button">
          {t("org.policy.save")}
        </button>
      </Form>
    </section>
  );
}
