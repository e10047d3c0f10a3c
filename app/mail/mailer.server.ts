// Where e-mail goes: an SMTP server when AUTH_EMAIL_SERVER/AUTH_EMAIL_FROM are set, the dev
// outbox (files in the data folder, /dev/outbox) when they are not and this is not production,
// and nowhere in production without a server — then e-mail sign-in is simply not offered.
import { logSettings, type AuthConfig } from "../auth/core/config.server";
import { countEmailFailed } from "../auth/core/metrics.server";
import { createOutboxMailer } from "./outbox.server";
import { createSmtpMailer } from "./smtp.server";
import type { Mailer } from "./types";

const cache = new WeakMap<AuthConfig, Mailer | null>();

export function getMailer(config: AuthConfig): Mailer | null {
  if (!cache.has(config)) {
    const mailer = config.email
      ? createSmtpMailer({ ...config.email, siteName: config.siteName })
      : config.production
        ? null
        : createOutboxMailer(config.dataDir, printUnlessSilent);
    cache.set(config, mailer && countingFailures(mailer));
  }
  return cache.get(config)!;
}

/** The outbox's console line, unless VESTIBULE_LOG=silent: "no log line at all" covers it too. */
function printUnlessSilent(line: string): void {
  if (logSettings().level !== "silent") console.log(line);
}

/** Every e-mail goes through here, so a refused one is counted once, by purpose (ADR 076). */
function countingFailures(mailer: Mailer): Mailer {
  return {
    kind: mailer.kind,
    async send(message) {
      try {
        await mailer.send(message);
      } catch (error) {
        countEmailFailed(message.purpose);
        throw error;
      }
    },
  };
}
