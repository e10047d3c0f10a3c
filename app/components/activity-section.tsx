import { en, type MessageKey } from "~/i18n/catalogues/en";
import { useT, type Translate } from "~/i18n/react";
import { useDescribeDevice } from "./device";
import { LocalTime } from "./local-time";
import { describeMethod, methodLabel, namesMethod } from "./sign-in-method";

type Event = { id: string; type: string; at: string; ip: string | null; userAgent: string | null; method: string | null; methodType: string | null };
type Props = { events: Event[] };

/** What an AuthEvent reads as on /account: "Signed in with a password", "Passkey added (…)". */
function describeEvent(t: Translate, { type, method, methodType }: Event): string {
  if (type === "signin" && namesMethod(method, methodType)) return describeMethod(t, methodType, method);
  const key = `event.${type}`;
  const label = Object.hasOwn(en, key) ? t(key as MessageKey) : t("event.unknown");
  return namesMethod(method, methodType) ? t("activity.withMethod", { event: label, method: methodLabel(t, methodType, method) }) : label;
}

/** /account: the user's latest auth events. */
export function ActivitySection({ events }: Props) {
  const t = useT();
  const describeDevice = useDescribeDevice();
  return (
    <section className="card" aria-labelledby="activity-heading">
      <h2 id="activity-heading">{t("activity.heading")}</h2>
      {events.length === 0 ? (
        <p className="muted">{t("activity.none")}</p>
      ) : (
        <table id="activity" className="data-table">
          <thead>
            <tr>
              <th scope="col">{t("activity.time")}</th>
              <th scope="col">{t("activity.event")}</th>
              <th scope="col">{t("activity.device")}</th>
              <th scope="col">{t("activity.address")}</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr key={e.id} data-event={e.type}>
                <td data-label={t("activity.time")}>
                  <LocalTime value={e.at} />
                </td>
                <td data-label={t("activity.event")}>{describeEvent(t, e)}</td>
                <td data-label={t("activity.device")}>{describeDevice(e.userAgent)}</td>
                <td data-label={t("activity.address")}>{e.ip ?? t("activity.unknownAddress")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
