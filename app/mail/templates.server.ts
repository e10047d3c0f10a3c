// The messages Vestibule sends. Each has a plain-text part that reads on its own and an HTML part
// that is one column, declares its language, has real text in the link (never "click here"),
// keeps the full URL visible for copying, and works with images and styles turned off.
import type { MailMessage } from "./types";

import { SITE_NAME } from "../site";

export { SITE_NAME };

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** 86400 → "24 hours", 900 → "15 minutes", 90 → "1 minute" (rounded down, never "0"). */
export function describeLifetime(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  if (seconds % 86400 === 0 && seconds >= 7 * 86400) return plural(seconds / 86400, "day");
  if (seconds >= 3600 && seconds % 3600 === 0) return plural(seconds / 3600, "hour");
  if (seconds >= 3600) return `${plural(Math.floor(seconds / 3600), "hour")} and ${plural(Math.floor((seconds % 3600) / 60), "minute")}`;
  return plural(Math.max(1, Math.floor(seconds / 60)), "minute");
}

type LinkMessage = {
  to: string;
  subject: string;
  heading: string;
  intro: string;
  action: string;
  url: string;
  host: string;
  lifetime: string;
  ignore: string;
  /** A one-time code beside the link (contract section 15) and how long it lasts. */
  code?: { code: string; lifetime: string } | null;
  /** Further lines after the link (another link, e.g. to the forgotten-password page). */
  extra?: { text: string; url: string; label: string } | null;
};

function linkMessage(m: LinkMessage): MailMessage {
  const text = [
    m.heading,
    "",
    m.intro,
    "",
    `${m.action}:`,
    m.url,
    "",
    `The link works once and expires in ${m.lifetime}.`,
    ...(m.code ? ["", `Or enter this code in the browser where you asked: ${m.code.code}`, `The code expires in ${m.code.lifetime}; the link and the code work once, together.`] : []),
    ...(m.extra ? ["", `${m.extra.text}`, `${m.extra.label}: ${m.extra.url}`] : []),
    "",
    m.ignore,
    "",
    `— ${SITE_NAME} (${m.host})`,
    "",
  ].join("\n");

  const e = escapeHtml;
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${e(m.subject)}</title>
</head>
<body style="margin:0;padding:24px;background:#f6f7f9;color:#1d232b;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:16px;line-height:1.5">
<div role="article" aria-roledescription="email" aria-label="${e(m.subject)}" lang="en" style="max-width:32rem;margin:0 auto;background:#ffffff;border:1px solid #d8dde3;border-radius:10px;padding:24px">
<h1 style="margin:0 0 16px;font-size:22px">${e(m.heading)}</h1>
<p style="margin:0 0 16px">${e(m.intro)}</p>
<p style="margin:0 0 24px"><a href="${e(m.url)}" style="display:inline-block;background:#2f5bd3;color:#ffffff;font-weight:600;text-decoration:none;padding:12px 20px;border-radius:6px">${e(m.action)}</a></p>
<p style="margin:0 0 8px">If the button does not work, copy this address into your browser:</p>
<p style="margin:0 0 24px;word-break:break-all"><a href="${e(m.url)}" style="color:#2f5bd3">${e(m.url)}</a></p>
<p style="margin:0 0 8px">The link works once and expires in ${e(m.lifetime)}.</p>
${m.code ? `<p style="margin:16px 0 8px">Or enter this code in the browser where you asked:</p>
<p style="margin:0 0 8px;font-size:28px;font-weight:700;letter-spacing:6px;font-family:ui-monospace,Menlo,Consolas,monospace">${e(m.code.code)}</p>
<p style="margin:0 0 16px">The code expires in ${e(m.code.lifetime)}; the link and the code work once, together.</p>
` : ""}${m.extra ? `<p style="margin:16px 0 16px">${e(m.extra.text)} <a href="${e(m.extra.url)}" style="color:#2f5bd3">${e(m.extra.label)}</a></p>
` : ""}
<p style="margin:0 0 24px;color:#5b6572">${e(m.ignore)}</p>
<p style="margin:0;color:#5b6572">${e(SITE_NAME)} · ${e(m.host)}</p>
</div>
</body>
</html>
`;
  return { to: m.to, subject: m.subject, text, html, link: m.url, ...(m.code ? { code: m.code.code } : {}) };
}

/** A code beside a link: the code and its lifetime, or nothing when codes are off. */
export type MailCode = { code: string; maxAgeSeconds: number } | null | undefined;

const codePart = (code: MailCode) => (code ? { code: code.code, lifetime: describeLifetime(code.maxAgeSeconds) } : null);

export function signInMessage(input: { to: string; url: string; host: string; maxAgeSeconds: number; code?: MailCode }): MailMessage {
  return linkMessage({
    code: codePart(input.code),
    to: input.to,
    subject: `Sign in to ${SITE_NAME}`,
    heading: `Sign in to ${SITE_NAME}`,
    intro: `Someone asked to sign in to ${SITE_NAME} at ${input.host} as ${input.to}. If it was you, use the link below.`,
    action: `Sign in as ${input.to}`,
    url: input.url,
    host: input.host,
    lifetime: describeLifetime(input.maxAgeSeconds),
    ignore: "If you did not ask for it, ignore this e-mail: nobody can sign in without the link.",
  });
}

export function changeEmailMessage(input: { to: string; url: string; host: string; maxAgeSeconds: number }): MailMessage {
  return linkMessage({
    to: input.to,
    subject: `Confirm your new e-mail address for ${SITE_NAME}`,
    heading: "Confirm your new e-mail address",
    intro: `Someone asked to use ${input.to} as the e-mail address of an account on ${SITE_NAME} at ${input.host}. If it was you, confirm it with the link below.`,
    action: `Use ${input.to} for my account`,
    url: input.url,
    host: input.host,
    lifetime: describeLifetime(input.maxAgeSeconds),
    ignore: "If you did not ask for it, ignore this e-mail: the address is not added without the link.",
  });
}

/** Sign-up for a new address: the link (or code) proves the address and creates the account. */
export function signUpMessage(input: { to: string; url: string; host: string; maxAgeSeconds: number; code?: MailCode }): MailMessage {
  return linkMessage({
    to: input.to,
    subject: `Finish creating your ${SITE_NAME} account`,
    heading: "Finish creating your account",
    intro: `Someone asked to create an account on ${SITE_NAME} at ${input.host} for ${input.to}. If it was you, use the link below: the account exists only once you do.`,
    action: "Create my account",
    url: input.url,
    host: input.host,
    lifetime: describeLifetime(input.maxAgeSeconds),
    ignore: "If you did not ask for it, ignore this e-mail: no account is created without the link or the code.",
    code: codePart(input.code),
  });
}

/**
 * Sign-up for an address that already has an account: says so, and offers what the owner can use
 * instead — an e-mail sign-in link and code (e-mail sign-in is always offered where mail can be
 * sent) — and the forgotten-password page.
 */
export function accountExistsMessage(input: {
  to: string;
  url: string;
  host: string;
  maxAgeSeconds: number;
  code?: MailCode;
  forgotPasswordUrl: string | null;
}): MailMessage {
  return linkMessage({
    to: input.to,
    subject: `You already have a ${SITE_NAME} account`,
    heading: "You already have an account",
    intro: `Someone asked to create an account on ${SITE_NAME} at ${input.host} for ${input.to}, but this address already has one. Nothing was changed. If it was you, sign in instead.`,
    action: `Sign in as ${input.to}`,
    url: input.url,
    host: input.host,
    lifetime: describeLifetime(input.maxAgeSeconds),
    ignore: "If you did not ask for it, ignore this e-mail: your account and its password were not changed.",
    code: codePart(input.code),
    extra: input.forgotPasswordUrl ? { text: "Forgot your password?", url: input.forgotPasswordUrl, label: "Choose a new one" } : null,
  });
}

/** Forgotten password: the link (one hour) or the code lets the owner choose a new password. */
export function resetPasswordMessage(input: { to: string; url: string; host: string; maxAgeSeconds: number; code?: MailCode }): MailMessage {
  return linkMessage({
    to: input.to,
    subject: `Choose a new ${SITE_NAME} password`,
    heading: "Choose a new password",
    intro: `Someone asked to reset the password of the ${SITE_NAME} account at ${input.host} for ${input.to}. If it was you, use the link below to choose a new one.`,
    action: "Choose a new password",
    url: input.url,
    host: input.host,
    lifetime: describeLifetime(input.maxAgeSeconds),
    ignore: "If you did not ask for it, ignore this e-mail: your password stays as it is.",
    code: codePart(input.code),
  });
}

/**
 * A security notice (ADR 059): what changed on the account, when and from which device, and what
 * to do if it was not the owner. Never a link or a code that signs in: the links go to pages where
 * the owner proves who they are (the forgotten-password page, the sign-in page).
 */
export type SecurityNotice = {
  to: string;
  host: string;
  subject: string;
  /** One sentence: what changed. */
  what: string;
  at: Date;
  /** A short device name ("Firefox on Linux"). */
  device: string;
  /** Where the owner takes the account back: a new password (when passwords are offered) or a sign-in. */
  help: { forgotPasswordUrl: string | null; signInUrl: string };
  /** The single-use "This wasn't me" link, once it exists (contract section 16); null until then. */
  wasntMeUrl?: string | null;
};

/** "2026-11-26 00:50 UTC": the zone named, never the server's local time. */
export function describeTime(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export function securityNoticeMessage(n: SecurityNotice): MailMessage {
  const when = describeTime(n.at);
  const recover = n.help.forgotPasswordUrl
    ? { text: "If this wasn't you, choose a new password now, then review your sign-in methods and devices on your account page.", label: "Choose a new password", url: n.help.forgotPasswordUrl }
    : { text: "If this wasn't you, sign in now and review your sign-in methods and devices on your account page.", label: "Sign in", url: n.help.signInUrl };
  const text = [
    n.subject,
    "",
    n.what,
    "",
    `When: ${when}`,
    `Device: ${n.device}`,
    "",
    "If it was you, there is nothing to do.",
    "",
    recover.text,
    `${recover.label}: ${recover.url}`,
    ...(n.wasntMeUrl ? ["", `This wasn't me: ${n.wasntMeUrl}`] : []),
    "",
    `— ${SITE_NAME} (${n.host})`,
    "",
  ].join("\n");
  const e = escapeHtml;
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${e(n.subject)}</title>
</head>
<body style="margin:0;padding:24px;background:#f6f7f9;color:#1d232b;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:16px;line-height:1.5">
<div role="article" aria-roledescription="email" aria-label="${e(n.subject)}" lang="en" style="max-width:32rem;margin:0 auto;background:#ffffff;border:1px solid #d8dde3;border-radius:10px;padding:24px">
<h1 style="margin:0 0 16px;font-size:22px">${e(n.subject)}</h1>
<p style="margin:0 0 16px">${e(n.what)}</p>
<p style="margin:0 0 4px">When: ${e(when)}</p>
<p style="margin:0 0 16px">Device: ${e(n.device)}</p>
<p style="margin:0 0 16px">If it was you, there is nothing to do.</p>
<p style="margin:0 0 16px">${e(recover.text)} <a href="${e(recover.url)}" style="color:#2f5bd3">${e(recover.label)}</a></p>
${n.wasntMeUrl ? `<p style="margin:0 0 16px"><a href="${e(n.wasntMeUrl)}" style="color:#2f5bd3">This wasn't me</a></p>\n` : ""}<p style="margin:0;color:#5b6572">${e(SITE_NAME)} · ${e(n.host)}</p>
</div>
</body>
</html>
`;
  return { to: n.to, subject: n.subject, text, html };
}
