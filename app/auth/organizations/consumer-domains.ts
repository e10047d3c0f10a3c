// Mailbox providers anyone can sign up with: an organization never owns one of these domains
// (docs/features/organizations.md, ADR 149), whatever its DNS says about a subdomain of them.
export const CONSUMER_DOMAINS: ReadonlySet<string> = new Set([
  "gmail.com", "googlemail.com", "yahoo.com", "yahoo.co.uk", "yahoo.fr", "yahoo.de", "ymail.com", "rocketmail.com",
  "outlook.com", "outlook.fr", "outlook.de", "hotmail.com", "hotmail.co.uk", "hotmail.fr", "hotmail.de", "live.com", "live.fr", "live.de", "msn.com",
  "icloud.com", "me.com", "mac.com", "aol.com", "aim.com", "proton.me", "protonmail.com", "pm.me", "tutanota.com", "tuta.io",
  "gmx.com", "gmx.de", "gmx.net", "gmx.at", "gmx.ch", "web.de", "t-online.de", "freenet.de", "mail.com", "email.com",
  "yandex.com", "yandex.ru", "mail.ru", "inbox.ru", "bk.ru", "list.ru", "rambler.ru", "zoho.com", "zohomail.com",
  "fastmail.com", "fastmail.fm", "hey.com", "qq.com", "163.com", "126.com", "sina.com", "naver.com", "daum.net",
  "orange.fr", "wanadoo.fr", "free.fr", "laposte.net", "sfr.fr", "libero.it", "virgilio.it", "seznam.cz", "wp.pl", "o2.pl",
  "comcast.net", "verizon.net", "att.net", "sbcglobal.net", "bellsouth.net", "cox.net", "btinternet.com", "sky.com",
]);
