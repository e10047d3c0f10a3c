// SMTP through nodemailer. Every wait is bounded, so a refused, silent or slow server fails the
// send within a few seconds instead of holding the visitor's request for nodemailer's defaults
// (two minutes to connect, ten of silence). Operators can change any of these in the URL's
// query, which nodemailer reads as options: smtp://host:587/?greetingTimeout=20000
import type { Transporter } from "nodemailer";
import addressparser from "nodemailer/lib/addressparser";
import { MailError, type MailMessage, type Mailer } from "./types";

export const SMTP_TIMEOUTS = {
  /** TCP (and TLS) connection established. */
  connectionTimeout: 5_000,
  /** The server's 220 greeting after connecting. */
  greetingTimeout: 5_000,
  /** Silence on an open connection, at any step. */
  socketTimeout: 10_000,
  dnsTimeout: 5_000,
} as const;

/** The whole send, whatever step it is stuck in. */
export const SMTP_SEND_DEADLINE_MS = 20_000;

export function createSmtpMailer(settings: { server: string; from: string; siteName: string }): Mailer {
  // nodemailer (about 5 MB of heap) is loaded by the first send, not when the server starts
  // (docs/decisions/094); addressparser above is one small module of it.
  let transport: Promise<Transporter> | undefined;
  const transportForSending = () =>
    (transport ??= import("nodemailer").then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        ...SMTP_TIMEOUTS,
        url: settings.server,
        // Message content never names files or URLs to inline; refuse them outright.
        disableFileAccess: true,
        disableUrlAccess: true,
      }),
    ));
  const parsed = addressparser(settings.from, { flatten: true })[0];
  const sender = parsed?.address;
  // An AUTH_EMAIL_FROM without a name goes out in the site's name (AUTH_SITE_NAME).
  const from = parsed?.name || !sender ? settings.from : { name: settings.siteName, address: sender };

  return {
    kind: "smtp",
    async send(message: MailMessage) {
      if (!sender) throw new MailError("AUTH_EMAIL_FROM does not contain an address");
      try {
        await (await transportForSending()).sendMail({
          from,
          // The address object and the explicit envelope mean nodemailer never parses the
          // recipient again: the one normalised address is the only RCPT TO.
          to: { name: "", address: message.to },
          envelope: { from: sender, to: [message.to] },
          subject: message.subject,
          text: message.text,
          html: message.html,
          signal: AbortSignal.timeout(SMTP_SEND_DEADLINE_MS),
        });
      } catch (error) {
        const e = error as { code?: string; responseCode?: number; command?: string; message?: string };
        const detail = [e.code, e.responseCode, e.command].filter(Boolean).join(" ");
        throw new MailError(`SMTP send failed${detail ? ` (${detail})` : ""}: ${e.message ?? String(error)}`, { cause: error });
      }
    },
  };
}
