// The messages Vestibule sends. Each has a plain-text part that reads on its own and an HTML part
// that is one column, declares its language, has real text in the link (never "click here"),
// keeps the full URL visible for copying, and works with images and styles turned off. Every
// text is in the language of the request that sends the message (app/i18n/t.server.ts), and the
// HTML part declares that language and its direction.
import { formatDateTime } from "../components/local-time";
import { currentDirection, currentLocale, t } from "../i18n/t.server";
import type { MailMessage } from "./types";

import { escapeHtml } from "../html";
import { getConfig } from "../auth/core/config.server";
import { logoUrl, mailLook } from "../theme.server";
import { mailSafeName } from "../auth/core/display-text";

/** The site's name (AUTH_SITE_NAME) for subjects, headings and signatures. */
export function siteName(): string {
  return getConfig().siteName;
}


/** 86400 → "24 hours", 900 → "15 minutes", 90 → "1 minute" (rounded down, never "0"). */
export function describeLifetime(seconds: number): string {
  if (seconds % 86400 === 0 && seconds >= 7 * 86400) return t("lifetime.days", { n: seconds / 86400 });
  if (seconds >= 3600 && seconds % 3600 === 0) return t("lifetime.hours", { n: seconds / 3600 });
  if (seconds >= 3600) {
    return t("lifetime.hoursAndMinutes", {
      hours: t("lifetime.hours", { n: Math.floor(seconds / 3600) }),
      minutes: t("lifetime.minutes", { n: Math.floor((seconds % 3600) / 60) }),
    });
  }
  return t("lifetime.minutes", { n: Math.max(1, Math.floor(seconds / 60)) });
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
  /** A one-time code beside the link  and how long it lasts. */
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
    t("mail.linkLabel", { action: m.action }),
    m.url,
    "",
    t("mail.linkOnce", { lifetime: m.lifetime }),
    ...(m.code ? ["", t("mail.codeText", { code: m.code.code }), t("mail.codeLifetime", { lifetime: m.code.lifetime })] : []),
    ...(m.extra ? ["", `${m.extra.text}`, `${m.extra.label}: ${m.extra.url}`] : []),
    "",
    m.ignore,
    "",
    `— ${siteName()} (${m.host})`,
    "",
  ].join("\n");

  const e = escapeHtml;
  const L = mailLook();
  const html = htmlMail(m.subject, `<h1 style="margin:0 0 16px;font-size:22px">${e(m.heading)}</h1>
<p style="margin:0 0 16px">${e(m.intro)}</p>
<p style="margin:0 0 24px"><a href="${e(m.url)}" style="display:inline-block;background:${e(L.brand)};color:${e(L.brandText)};font-weight:600;text-decoration:none;padding:12px 20px;border-radius:6px">${e(m.action)}</a></p>
<p style="margin:0 0 8px">${e(t("mail.buttonFallback"))}</p>
<p style="margin:0 0 24px;word-break:break-all" dir="ltr"><a href="${e(m.url)}" style="color:${e(L.brand)}">${e(m.url)}</a></p>
<p style="margin:0 0 8px">${e(t("mail.linkOnce", { lifetime: m.lifetime }))}</p>
${m.code ? `<p style="margin:16px 0 8px">${e(t("mail.codeIntro"))}</p>
<p style="margin:0 0 8px;font-size:28px;font-weight:700;letter-spacing:6px;font-family:${e(L.fontMono)}" dir="ltr">${e(m.code.code)}</p>
<p style="margin:0 0 16px">${e(t("mail.codeLifetime", { lifetime: m.code.lifetime }))}</p>
` : ""}${m.extra ? `<p style="margin:16px 0 16px">${e(m.extra.text)} <a href="${e(m.extra.url)}" style="color:${e(L.brand)}">${e(m.extra.label)}</a></p>
` : ""}
<p style="margin:0 0 24px;color:${e(L.muted)}">${e(m.ignore)}</p>
<p style="margin:0;color:${e(L.muted)}">${e(siteName())} · ${e(m.host)}</p>
`, new URL(m.url).origin);
  return { to: m.to, subject: m.subject, text, html, link: m.url, ...(m.code ? { code: m.code.code } : {}) };
}

/** A code beside a link: the code and its lifetime, or nothing when codes are off. */
export type MailCode = { code: string; maxAgeSeconds: number } | null | undefined;

const codePart = (code: MailCode) => (code ? { code: code.code, lifetime: describeLifetime(code.maxAgeSeconds) } : null);

export function signInMessage(input: { to: string; url: string; host: string; maxAgeSeconds: number; code?: MailCode }): MailMessage {
  return linkMessage({
    code: codePart(input.code),
    to: input.to,
    subject: t("mail.signin.subject", { site: siteName() }),
    heading: t("mail.signin.heading", { site: siteName() }),
    intro: t("mail.signin.intro", { site: siteName(), host: input.host, address: input.to }),
    action: t("mail.signin.action", { address: input.to }),
    url: input.url,
    host: input.host,
    lifetime: describeLifetime(input.maxAgeSeconds),
    ignore: t("mail.signin.ignore"),
  });
}

/**
 * The code of a re-authentication (ADR 080): a code only, no link — it proves the mailbox to a
 * browser already signed in that asked for it, and signs nobody in anywhere else.
 */
export function reauthCodeMessage(input: { to: string; origin: string; code: string; maxAgeSeconds: number }): MailMessage {
  const host = new URL(input.origin).host;
  const subject = t("mail.reauth.subject", { site: siteName() });
  const heading = t("mail.reauth.heading");
  const intro = t("mail.reauth.intro", { site: siteName(), host: host });
  const lifetime = describeLifetime(input.maxAgeSeconds);
  const ignore = t("mail.reauth.ignore");
  const text = [heading, "", intro, "", t("mail.reauth.code", { code: input.code }), t("mail.reauth.lifetime", { lifetime }), "", ignore, "", `— ${siteName()} (${host})`, ""].join("\n");
  const e = escapeHtml;
  const L = mailLook();
  const html = htmlMail(subject, `<h1 style="margin:0 0 16px;font-size:22px">${e(heading)}</h1>
<p style="margin:0 0 16px">${e(intro)}</p>
<p style="margin:0 0 8px;font-size:28px;font-weight:700;letter-spacing:6px;font-family:${e(L.fontMono)}" dir="ltr">${e(input.code)}</p>
<p style="margin:0 0 16px">${e(t("mail.reauth.lifetime", { lifetime }))}</p>
<p style="margin:0 0 24px;color:${e(L.muted)}">${e(ignore)}</p>
<p style="margin:0;color:${e(L.muted)}">${e(siteName())} · ${e(host)}</p>
`, input.origin);
  return { to: input.to, subject, text, html, code: input.code, purpose: "reauth" };
}

export function changeEmailMessage(input: { to: string; url: string; host: string; maxAgeSeconds: number }): MailMessage {
  return linkMessage({
    to: input.to,
    subject: t("mail.change.subject", { site: siteName() }),
    heading: t("mail.change.heading"),
    intro: t("mail.change.intro", { site: siteName(), host: input.host, address: input.to }),
    action: t("mail.change.action", { address: input.to }),
    url: input.url,
    host: input.host,
    lifetime: describeLifetime(input.maxAgeSeconds),
    ignore: t("mail.change.ignore"),
  });
}

/**
 * An organization's invitation (docs/features/organizations.md): a link to the invitation's page,
 * which signs nobody in; accepting there needs the signed-in account whose verified address this is.
 * The organization's and the inviter's names are someone else's words: made plain, never links.
 */
export function invitationMessage(input: { to: string; url: string; host: string; organization: string; inviter: string | null; role: "owner" | "admin" | "member"; maxAgeSeconds: number }): MailMessage {
  const organization = mailSafeName(input.organization) ?? "";
  const inviter = mailSafeName(input.inviter);
  const role = t(input.role === "owner" ? "org.role.owner" : input.role === "admin" ? "org.role.admin" : "org.role.member");
  const values = { organization, site: siteName(), host: input.host, address: input.to, role };
  return linkMessage({
    to: input.to,
    subject: t("mail.invitation.subject", values),
    heading: t("mail.invitation.heading", values),
    intro: inviter ? t("mail.invitation.intro", { ...values, inviter }) : t("mail.invitation.introNoName", values),
    action: t("mail.invitation.action"),
    url: input.url,
    host: input.host,
    lifetime: describeLifetime(input.maxAgeSeconds),
    ignore: t("mail.invitation.ignore"),
  });
}

/** Sign-up for a new address: the link (or code) proves the address and creates the account. */
export function signUpMessage(input: { to: string; url: string; host: string; maxAgeSeconds: number; code?: MailCode }): MailMessage {
  return linkMessage({
    to: input.to,
    subject: t("mail.signup.subject", { site: siteName() }),
    heading: t("mail.signup.heading"),
    intro: t("mail.signup.intro", { site: siteName(), host: input.host, address: input.to }),
    action: t("mail.signup.action"),
    url: input.url,
    host: input.host,
    lifetime: describeLifetime(input.maxAgeSeconds),
    ignore: t("mail.signup.ignore"),
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
    subject: t("mail.exists.subject", { site: siteName() }),
    heading: t("mail.exists.heading"),
    intro: t("mail.exists.intro", { site: siteName(), host: input.host, address: input.to }),
    action: t("mail.exists.action", { address: input.to }),
    url: input.url,
    host: input.host,
    lifetime: describeLifetime(input.maxAgeSeconds),
    ignore: t("mail.exists.ignore"),
    code: codePart(input.code),
    extra: input.forgotPasswordUrl ? { text: t("mail.exists.forgot"), url: input.forgotPasswordUrl, label: t("mail.exists.forgotLink") } : null,
  });
}

/** Forgotten password: the link (one hour) or the code lets the owner choose a new password. */
export function resetPasswordMessage(input: { to: string; url: string; host: string; maxAgeSeconds: number; code?: MailCode }): MailMessage {
  return linkMessage({
    to: input.to,
    subject: t("mail.reset.subject", { site: siteName() }),
    heading: t("mail.reset.heading"),
    intro: t("mail.reset.intro", { site: siteName(), host: input.host, address: input.to }),
    action: t("mail.reset.action"),
    url: input.url,
    host: input.host,
    lifetime: describeLifetime(input.maxAgeSeconds),
    ignore: t("mail.reset.ignore"),
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
  /**
   * A short device name ("Firefox on Linux"); null when an operator made the change (an admin in
   * /admin, the command line): their device and place are theirs, not the owner's, and the notice
   * says an administrator did it instead.
   */
  device: string | null;
  /** The approximate place of the client address, only when a local lookup is configured. */
  place?: string | null;
  /** Where the owner takes the account back: a new password (when passwords are offered) or a sign-in. */
  help: { forgotPasswordUrl: string | null; signInUrl: string };
  /** The single-use "This wasn't me" link (ADR 081). */
  wasntMeUrl?: string | null;
};

/**
 * "26 Nov 2026, 00:50 UTC" in the request's language ("26. Nov. 2026, 00:50 UTC" in German): the
 * recipient's zone is unknown, so UTC, always named (ADR 071's format).
 */
export function describeTime(at: Date): string {
  return formatDateTime(at, currentLocale(), "UTC");
}

export function securityNoticeMessage(n: SecurityNotice): MailMessage {
  const when = describeTime(n.at);
  const recover = n.help.forgotPasswordUrl
    ? { text: t("mail.notice.recoverPassword"), label: t("mail.notice.recoverPasswordLabel"), url: n.help.forgotPasswordUrl }
    : { text: t("mail.notice.recoverSignIn"), label: t("mail.notice.recoverSignInLabel"), url: n.help.signInUrl };
  const wasntMe = t("mail.notice.wasntMe");
  const text = [
    n.subject,
    "",
    n.what,
    "",
    t("mail.notice.when", { when }),
    ...(n.device === null ? [t("mail.notice.byOperator")] : [t("mail.notice.device", { device: n.device })]),
    ...(n.device !== null && n.place ? [t("mail.notice.place", { place: n.place })] : []),
    "",
    t("mail.notice.itWasYou"),
    "",
    recover.text,
    `${recover.label}: ${recover.url}`,
    ...(n.wasntMeUrl ? ["", t("mail.notice.wasntMeText"), `${wasntMe}: ${n.wasntMeUrl}`] : []),
    "",
    `— ${siteName()} (${n.host})`,
    "",
  ].join("\n");
  const e = escapeHtml;
  const L = mailLook();
  const html = htmlMail(n.subject, `<h1 style="margin:0 0 16px;font-size:22px">${e(n.subject)}</h1>
<p style="margin:0 0 16px">${e(n.what)}</p>
<p style="margin:0 0 4px">${e(t("mail.notice.when", { when }))}</p>
${
  n.device === null
    ? `<p style="margin:0 0 16px">${e(t("mail.notice.byOperator"))}</p>`
    : `<p style="margin:0 0 ${n.place ? 4 : 16}px">${e(t("mail.notice.device", { device: n.device }))}</p>`
}
${n.device !== null && n.place ? `<p style="margin:0 0 16px">${e(t("mail.notice.place", { place: n.place }))}</p>\n` : ""}
<p style="margin:0 0 16px">${e(t("mail.notice.itWasYou"))}</p>
<p style="margin:0 0 16px">${e(recover.text)} <a href="${e(recover.url)}" style="color:${e(L.brand)}">${e(recover.label)}</a></p>
${n.wasntMeUrl ? `<p style="margin:0 0 8px">${e(t("mail.notice.wasntMeText"))}</p>
<p style="margin:0 0 8px"><a href="${e(n.wasntMeUrl)}" style="color:${e(L.brand)}">${e(wasntMe)}</a></p>
<p style="margin:0 0 16px;word-break:break-all" dir="ltr">${e(n.wasntMeUrl)}</p>
` : ""}<p style="margin:0;color:${e(L.muted)}">${e(siteName())} · ${e(n.host)}</p>
`, new URL(n.help.signInUrl).origin);
  return { to: n.to, subject: n.subject, text, html };
}

/**
 * The HTML document every e-mail shares: its language and direction (the request's), the subject
 * as title and label, and one card holding `body` (already escaped HTML) under the site's logo
 * (an absolute URL under `origin`, the site's public origin; alt="" as the site's name follows it)
 * and name, the card's top edge in the brand colour. Colours, fonts and the logo are
 * app/theme.css's (app/theme.server.ts).
 */
function htmlMail(subject: string, body: string, origin: string): string {
  const e = escapeHtml;
  const L = mailLook();
  const lang = e(currentLocale());
  // Left to right is the default: only a right-to-left language needs saying so.
  const dir = currentDirection() === "rtl" ? ' dir="rtl"' : "";
  return `<!DOCTYPE html>
<html lang="${lang}"${dir}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${e(subject)}</title>
</head>
<body style="margin:0;padding:24px;background:${e(L.bg)};color:${e(L.text)};font-family:${e(L.font)};font-size:16px;line-height:1.5">
<div role="article" aria-roledescription="email" aria-label="${e(subject)}" lang="${lang}"${dir} style="max-width:32rem;margin:0 auto;background:${e(L.card)};border:1px solid ${e(L.border)};border-top:4px solid ${e(L.brand)};border-radius:${e(L.radius)};padding:24px">
<p style="margin:0 0 16px;font-weight:700"><img src="${e(logoUrl(L, origin))}" alt="" width="32" height="32" style="vertical-align:middle;border:0;margin-inline-end:8px">${e(siteName())}</p>
${body}</div>
</body>
</html>
`;
}
