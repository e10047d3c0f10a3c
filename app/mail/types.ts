// What every mail transport is and sends. The transports (smtp.server.ts, outbox.server.ts)
// import these; the picker (mailer.server.ts) imports the transports, so nothing imports back.
export type MailMessage = {
  /** Exactly one normalised address (app/auth/core/email-address.ts); it is also the whole envelope. */
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The link the message is about, so the dev outbox can print and show it. */
  link?: string;
  /** The one-time code the message carries beside its link, for the dev outbox. */
  code?: string;
  /** What the message is for (signin, signup, reset, change-email, …): the label of a failed send in /metrics. */
  purpose?: string;
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
