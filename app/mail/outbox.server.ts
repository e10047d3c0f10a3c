// The development outbox: with no SMTP server configured outside production, every message is
// written to <data folder>/outbox/ as one JSON file, its link is printed on the console, and
// /dev/outbox shows the messages. Nothing leaves the machine, so `npm run dev` works offline.
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { MailMessage, Mailer } from "./types";

export const OUTBOX_FOLDER = "outbox";

const StoredMessage = z.object({
  id: z.string(),
  sentAt: z.string(),
  to: z.string(),
  subject: z.string(),
  text: z.string(),
  html: z.string(),
  link: z.string().nullable(),
  code: z.string().nullable().optional(),
});
export type StoredMessage = z.infer<typeof StoredMessage>;

export function outboxDir(dataDir: string): string {
  return path.join(dataDir, OUTBOX_FOLDER);
}

export function createOutboxMailer(dataDir: string, print: (line: string) => void = console.log): Mailer {
  const dir = outboxDir(dataDir);
  return {
    kind: "outbox",
    async send(message: MailMessage) {
      const sentAt = new Date();
      // Sortable by name: time first, then randomness so two messages in one millisecond differ.
      const id = `${sentAt.toISOString().replace(/[:.]/g, "-")}-${randomBytes(4).toString("hex")}`;
      const stored: StoredMessage = { id, sentAt: sentAt.toISOString(), link: message.link ?? null, code: message.code ?? null, ...pick(message) };
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, `${id}.json`), JSON.stringify(stored, null, 2) + "\n", { mode: 0o600 });
      print(`[vestibule] dev outbox: "${message.subject}" to ${message.to}${message.link ? `\n[vestibule]   ${message.link}` : ""}${message.code ? `\n[vestibule]   code ${message.code}` : ""}`);
    },
  };
}

function pick(m: MailMessage) {
  return { to: m.to, subject: m.subject, text: m.text, html: m.html };
}

const ID = /^[0-9TZ-]+-[0-9a-f]{8}$/;

/** The newest `limit` messages, newest first. Unreadable files are skipped, not fatal. */
export async function listOutbox(dataDir: string, limit = 50): Promise<StoredMessage[]> {
  const dir = outboxDir(dataDir);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const ids = names
    .filter((n) => n.endsWith(".json") && ID.test(n.slice(0, -5)))
    .sort()
    .reverse()
    .slice(0, limit)
    .map((n) => n.slice(0, -5));
  const messages = await Promise.all(ids.map((id) => readOutboxMessage(dataDir, id)));
  return messages.filter((m): m is StoredMessage => m !== null);
}

export async function readOutboxMessage(dataDir: string, id: string): Promise<StoredMessage | null> {
  if (!ID.test(id)) return null;
  try {
    const parsed = StoredMessage.safeParse(JSON.parse(await readFile(path.join(outboxDir(dataDir), `${id}.json`), "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
