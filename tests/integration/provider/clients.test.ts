// The provider's clients as an operator manages them, on both databases: `npm run
// oauth:client:add|list|remove`, the secret printed once and kept sealed, native apps recognised
// by their redirect URIs, removal revoking what the client was given, audit events.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applicationTypeFor, findClientMetadata } from "../../../app/auth/provider/clients.server";
import { withEnv } from "../../support/auth";
import { runInProcess, runScript } from "../../support/cli";
import { dbLabel, resetDatabase, testDb } from "../../support/db";

let undoEnv: (() => void) | null = null;
beforeEach(async () => {
  await resetDatabase();
  undoEnv = withEnv({ AUTH_PROVIDER: "true", AUTH_URL: "https://id.example.test" });
});
afterEach(() => {
  undoEnv?.();
});

const clientIdIn = (stdout: string) => /client_id: (\S+)/.exec(stdout)?.[1];

describe(`oauth:client:* on ${dbLabel}`, () => {
  it("adds a confidential client: the secret is printed once and stored sealed; list shows it without the secret", async () => {
    const added = await runScript("scripts/oauth-client-add.ts", ["--name", "Notes", "--redirect-uri", "https://notes.example.com/cb", "--redirect-uri", "https://notes.example.com/cb2"], {
      AUTH_PROVIDER: "true",
      AUTH_URL: "https://id.example.test",
    });
    expect(added.code, added.stderr).toBe(0);
    const clientId = clientIdIn(added.stdout)!;
    const secret = /client_secret: (\S+)/.exec(added.stdout)?.[1];
    expect(secret).toMatch(/^[\w-]{43}$/);
    const row = await testDb().oAuthClient.findUniqueOrThrow({ where: { clientId } });
    expect(row.secretSealed).not.toContain(secret);
    expect(row.metadata).not.toContain(secret);
    expect((await findClientMetadata(clientId))?.client_secret).toBe(secret);
    expect(JSON.parse(row.metadata)).toMatchObject({ application_type: "web", token_endpoint_auth_method: "client_secret_basic", redirect_uris: ["https://notes.example.com/cb", "https://notes.example.com/cb2"] });

    const listed = await runInProcess("scripts/oauth-client-list.ts", []);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${clientId}  Notes  (confidential, cli`);
    expect(listed.stdout).not.toContain(secret);
    const events = await testDb().authEvent.findMany({ where: { type: "oauth-client-added" } });
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.detail!)).toMatchObject({ clientId, source: "cli" });
  });

  it("a public client with loopback or private-scheme redirect URIs is native; a bad redirect URI is refused", async () => {
    const cli = await runInProcess("scripts/oauth-client-add.ts", ["--name", "CLI", "--public", "--redirect-uri", "http://127.0.0.1/callback", "--redirect-uri", "com.example.cli:/cb"]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).not.toContain("client_secret");
    const row = await testDb().oAuthClient.findUniqueOrThrow({ where: { clientId: clientIdIn(cli.stdout)! } });
    expect(JSON.parse(row.metadata)).toMatchObject({ application_type: "native", token_endpoint_auth_method: "none" });
    expect(applicationTypeFor(["http://localhost/cb", "https://app.example.com/cb"])).toBe("web");
    expect(applicationTypeFor(["http://[::1]/cb"])).toBe("native");
    for (const bad of ["http://app.example.com/cb", "https://app.example.com/cb#x", "javascript:alert(1)", "https://user:pw@app.example.com/cb"]) {
      const refused = await runInProcess("scripts/oauth-client-add.ts", ["--name", "Bad", "--redirect-uri", bad]);
      expect(refused.code, bad).toBe(1);
    }
    const usage = await runInProcess("scripts/oauth-client-add.ts", ["--redirect-uri", "https://a.example/cb"]);
    expect(usage.code).toBe(2);
  });

  it("remove revokes every grant and token of the client; an unknown client is exit 1", async () => {
    const added = await runInProcess("scripts/oauth-client-add.ts", ["--name", "Notes", "--redirect-uri", "https://notes.example.com/cb"]);
    const clientId = clientIdIn(added.stdout)!;
    await testDb().oAuthPayload.create({ data: { kind: "Grant", id: "g1", payload: "{}", clientId, accountId: "u1" } });
    await testDb().oAuthPayload.create({ data: { kind: "RefreshToken", id: "r1", payload: "{}", clientId, grantId: "g1" } });
    const removed = await runInProcess("scripts/oauth-client-remove.ts", ["--client-id", clientId]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(await testDb().oAuthPayload.count()).toBe(0);
    expect(await testDb().oAuthClient.count()).toBe(0);
    expect(await testDb().authEvent.count({ where: { type: "oauth-client-removed" } })).toBe(1);
    expect((await runInProcess("scripts/oauth-client-remove.ts", ["--client-id", clientId])).code).toBe(1);
  });

  it("with the provider off, adding is refused", async () => {
    undoEnv?.();
    undoEnv = withEnv({ AUTH_PROVIDER: undefined });
    const refused = await runInProcess("scripts/oauth-client-add.ts", ["--name", "Notes", "--redirect-uri", "https://notes.example.com/cb"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the OAuth provider is off/);
  });
});
