// Where e-mail goes: an SMTP server when AUTH_EMAIL_SERVER/AUTH_EMAIL_FROM are set, the dev
// outbox (files in the data folder, /dev/outbox) when they are not and this is not production,
// and nowhere in production without a server — then e-mail sign-in is simply not offered.
import type { AuthConfig } from "../auth/core/config.server";
import { createOutboxMailer } from "./outbox.server";
import { createSmtpMailer } from "./smtp.server";

export type MailMessage = {
  /** Exactly one normalised address (app/auth/email-address.ts); it is also the whole envelope. */
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The link the message is about, so the dev outbox can print and show it. */
  link?: string;
};

export type Mailer = {
  kind: "smtp" | "outbox";
  /** Resolves once the server accepted the message; rejects with a MailError otherwise. */
  send(message: MailMessage): Promise<void>;
};

/** A message was not accepted. The message is for the log only (it may name the server). */
export class MailError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "MailError";
  }
}

const cache = new WeakMap<AuthConfig, Mailer | null>();

export function getMailer(config: AuthConfig): Mailer | null {
  if (!cache.has(config)) {
    const mailer = config.email
      ? createSmtpMailer(config.email)
      : config.production
        ? null
        : createOutboxMailer(config.dataDir);
    cache.set(config, mailer);
  }
  return cache.get(config)!;
}
