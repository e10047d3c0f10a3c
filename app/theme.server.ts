// The site's look for what the server writes itself (the e-mails): the custom properties of
// app/theme.css, the one file the pages' colours, fonts and logo come from, read from it once.
// The light values are the ones outside any @media block: mail programs differ too much in how
// they honour a dark scheme, so a message keeps the light look. docs/features/look.md
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The theme file, relative to the project's root. */
export const THEME_FILE = "app/theme.css";

/** What a message's HTML uses: the theme's colours, fonts and radius, and the logo's path or URL (the templates escape each). */
export type MailLook = {
  brand: string;
  brandText: string;
  text: string;
  muted: string;
  bg: string;
  card: string;
  border: string;
  font: string;
  fontMono: string;
  radius: string;
  /** The --logo file: a path under public/ ("/logo.png") or an absolute URL. */
  logo: string;
};

const NEEDED = { brand: "--brand", brandText: "--brand-text", text: "--text", muted: "--muted", bg: "--bg", card: "--card", border: "--border", font: "--font", fontMono: "--font-mono", radius: "--radius", logo: "--logo" } as const;

/** The custom properties `css` declares outside any @media block, by name ("--brand" → "#2f5bd3"). */
export function lightProperties(css: string): Record<string, string> {
  const plain = css.replace(/\/\*[\s\S]*?\*\//g, "");
  const media = plain.indexOf("@media");
  const outside = media === -1 ? plain : plain.slice(0, media);
  const properties: Record<string, string> = {};
  for (const [, name, value] of outside.matchAll(/(--[\w-]+)\s*:\s*([^;}]+)[;}]/g)) properties[name!] = value!.trim();
  return properties;
}

/** The look a message takes from `css` (the theme file's text); throws naming a property it lacks. */
export function mailLookOf(css: string, file = THEME_FILE): MailLook {
  const properties = lightProperties(css);
  const look = {} as Record<keyof MailLook, string>;
  for (const [key, name] of Object.entries(NEEDED) as [keyof MailLook, string][]) {
    const value = properties[name];
    if (!value) throw new Error(`${file} must declare ${name} in its :root block (outside @media), e.g. the value the file ships with`);
    look[key] = value;
  }
  const logo = /^url\(\s*(["']?)([^"')]+)\1\s*\)$/.exec(look.logo);
  if (!logo) throw new Error(`${file}: --logo must be url("/file-in-public.png") or url("https://…"), got ${look.logo}`);
  look.logo = logo[2]!;
  return look;
}

/** The project's root: the nearest folder above this module with a package.json (the source tree or the build's). */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json"))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`No package.json above ${fileURLToPath(import.meta.url)}: cannot find ${THEME_FILE}`);
    dir = parent;
  }
  return dir;
}

let cached: MailLook | undefined;

/** The e-mails' look, from app/theme.css (read once — at the start by the server and the dev bootstrap — then kept). */
export function mailLook(): MailLook {
  cached ??= mailLookOf(readFileSync(path.join(projectRoot(), THEME_FILE), "utf8"));
  return cached;
}

/** The logo's absolute URL for a message sent from `origin` (the site's public origin). */
export function logoUrl(look: MailLook, origin: string): string {
  return new URL(look.logo, origin).href;
}
