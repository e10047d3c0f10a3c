// npm run user:add -- --email E [--name N] < password   (or typed at the prompt)
// Creates a password user, or sets an existing user's password (and name): then, as a password
// change does, every session of theirs ends and they get the password-changed security e-mail
// (sent from here when mail is configured, else by a running instance's sender). The password is read
// from standard input: piped, or typed at a prompt that does not show it. --password still works,
// with a warning: its value shows in npm's banner and to every user of the machine (ps).
import { ZodError } from "zod";
import { getConfig } from "../app/auth/core/config.server";
import { authRequest } from "../app/auth/core/request.server";
import { setPasswordAsOperator } from "../app/auth/passwords/operator.server";
import { mailSenderIdle, stopMailSender } from "../app/mail/queue.server";
import { Refused, runCommand, UsageError } from "./admin-cli";

const USAGE = "npm run user:add -- --email E [--name N] < file-holding-the-password   (or type it at the prompt)";

/** The password from standard input: a pipe's first line, or typed at a prompt without echo. */
async function readPassword(email: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = "";
    for await (const chunk of stdin) text += chunk;
    return text.split(/\r?\n/)[0] ?? "";
  }
  // Echo off before the prompt shows, so nothing typed after it is ever echoed.
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  process.stderr.write(`password for ${email} (not shown): `);
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = "";
      stdin.on("data", (keys: string) => {
        for (const key of keys) {
          if (key === "\r" || key === "\n" || key === "\u0004") return resolve(typed);
          if (key === "\u0003") return reject(new UsageError("interrupted"));
          if (key === "\u007f" || key === "\b") typed = typed.slice(0, -1);
          else typed += key;
        }
      });
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    process.stderr.write("\n");
  }
}

runCommand(
  "user:add",
  USAGE,
  { email: { type: "string" }, password: { type: "string" }, name: { type: "string" } },
  async (values, io) => {
    if (typeof values.email !== "string" || !values.email.trim()) throw new UsageError("--email is required");
    let password: string;
    if (typeof values.password === "string") {
      io.warn("--password shows the password to every user of this machine (ps) and in npm's banner; give it on standard input");
      password = values.password;
    } else password = await readPassword(values.email);
    if (!password) throw new UsageError("give the password on standard input");
    try {
      const config = getConfig();
      // The notice's links and host: the site's public origin (AUTH_URL), as a request to it would have them.
      const ar = authRequest(new Request(config.origin ?? "http://localhost/"), config);
      const name = typeof values.name === "string" ? values.name : undefined;
      const { user, created, sessionsEnded } = await setPasswordAsOperator(ar, { email: values.email, password, name }, { source: "cli" });
      await mailSenderIdle();
      stopMailSender();
      return created ? `created ${user.email} (id ${user.id})` : `updated ${user.email} (id ${user.id}); ${sessionsEnded} session(s) ended`;
    } catch (error) {
      // A value the rules refuse (an address, the password, the name) is a refusal, not bad usage: exit 1.
      if (error instanceof ZodError) throw new Refused(error.issues.map((i) => i.message).join("; "));
      throw error;
    }
  },
);
