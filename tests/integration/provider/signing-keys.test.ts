// The OAuth provider's signing keys (ADR 130) on both databases: made on first use and sealed at
// rest, published without their private parts, rotated with a lead before the new key signs, the
// old key published until the tokens it signed have expired and then removed by cleanup,
// re-sealed by secret:reseal, and `npm run oauth:keys:rotate` as an operator runs it.
import { compactVerify, importJWK, SignJWT, type JWK } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCleanup } from "../../../app/auth/core/cleanup.server";
import { resealColumn } from "../../../app/auth/core/sealed-at-rest.server";
import { ID_TOKEN_TTL } from "../../../app/auth/provider/lifetimes.server";
import {
  forgetSigningKeys,
  issuerUrl,
  KEY_PUBLISH_LEAD_SECONDS,
  privateJwksForEngine,
  publicJwks,
  rotateSigningKeys,
  signingKeyColumn,
  currentKeyStates,
} from "../../../app/auth/provider/signing-keys.server";
import { withEnv } from "../../support/auth";
import { runInProcess, runScript } from "../../support/cli";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { TEST_AUTH_SECRET } from "../../support/env";

const ISSUER = "https://id.example.test";
const PROVIDER_ENV = { AUTH_PROVIDER: "true", AUTH_URL: ISSUER, AUTH_PROVIDER_ACCESS_TOKEN_TTL: "600" };
let undoEnv: (() => void) | null = null;

beforeEach(async () => {
  await resetDatabase();
  undoEnv = withEnv(PROVIDER_ENV);
  forgetSigningKeys();
});
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
  forgetSigningKeys();
});

const PRIVATE = ["d", "p", "q", "dp", "dq", "qi"];

async function signWith(jwk: JWK): Promise<string> {
  return new SignJWT({ probe: true }).setProtectedHeader({ alg: jwk.alg!, kid: jwk.kid }).sign(await importJWK({ ...jwk, key_ops: undefined }, jwk.alg));
}
async function verifiesWith(token: string, jwks: { keys: JWK[] }): Promise<boolean> {
  const kid = JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()).kid;
  const key = jwks.keys.find((k) => k.kid === kid);
  if (!key) return false;
  return compactVerify(token, await importJWK(key, key.alg)).then(
    () => true,
    () => false,
  );
}

describe(`signing keys on ${dbLabel}`, () => {
  it("the issuer is AUTH_URL's origin", () => {
    expect(issuerUrl()).toBe(ISSUER);
  });

  it("the first use makes one RS256 and one ES256 key, sealed at rest, published without their private parts", async () => {
    const published = await publicJwks();
    expect(published.keys.map((k) => k.alg).sort()).toEqual(["ES256", "RS256"]);
    for (const key of published.keys) {
      for (const member of PRIVATE) expect(key).not.toHaveProperty(member);
      expect(key.use).toBe("sig");
      expect(key.key_ops).toBeUndefined();
    }
    const engine = await privateJwksForEngine();
    expect(engine.keys.map((k) => k.kid)).toEqual(expect.arrayContaining(published.keys.map((k) => k.kid)));
    expect(engine.keys.every((k) => typeof k.d === "string")).toBe(true);
    const rows = await testDb().oAuthSigningKey.findMany();
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      // A compact JWE: five parts, and nothing of the key readable.
      expect(row.privateJwk.split(".")).toHaveLength(5);
      expect(row.privateJwk).not.toContain('"d"');
    }
    // Read again (another instance, a restart): the same keys, none made twice.
    forgetSigningKeys();
    expect((await publicJwks()).keys.map((k) => k.kid).sort()).toEqual(published.keys.map((k) => k.kid).sort());
    expect(await testDb().oAuthSigningKey.count()).toBe(2);
  });

  it("a rotation publishes the new key at once, signs with it after the lead, and keeps the old one until its tokens expired; cleanup then removes it", async () => {
    const start = new Date();
    const before = await privateJwksForEngine();
    const oldRs = before.keys.find((k) => k.alg === "RS256")!;
    const tokenFromOldKey = await signWith(oldRs);

    const { kids, activeFrom } = await rotateSigningKeys(start);
    expect(activeFrom.getTime()).toBe(start.getTime() + KEY_PUBLISH_LEAD_SECONDS * 1000);

    // Before the lead has passed: both published, the old one still signs, the new one waits.
    const waiting = await currentKeyStates(start);
    expect(waiting.filter((s) => s.signs).map((s) => s.kid)).toContain(oldRs.kid);
    expect(waiting.filter((s) => !s.signs).map((s) => s.kid).sort()).toEqual([...kids].sort());
    const published = await publicJwks();
    expect(published.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([...kids, oldRs.kid]));
    expect(published.keys.find((k) => kids.includes(k.kid!))!.key_ops).toEqual(["verify"]);

    // After the lead: the new keys sign (first for the engine), the old ones only verify.
    forgetSigningKeys();
    const after = await currentKeyStates(new Date(activeFrom.getTime() + 1));
    expect(after.filter((s) => s.signs).map((s) => s.kid).sort()).toEqual([...kids].sort());
    expect(after.find((s) => s.kid === oldRs.kid)).toMatchObject({ signs: false });
    forgetSigningKeys();
    await currentKeyStates(new Date(activeFrom.getTime() + 1));
    const engine = await privateJwksForEngine();
    expect(engine.keys.find((k) => k.alg === "RS256")!.kid).toBe(kids.find((kid) => engine.keys.find((k) => k.kid === kid)?.alg === "RS256"));
    expect(await verifiesWith(tokenFromOldKey, await publicJwks())).toBe(true);

    // Past every token the old key signed: no longer published, and cleanup deletes it.
    const row = await testDb().oAuthSigningKey.findUniqueOrThrow({ where: { kid: oldRs.kid } });
    expect(row.publishedUntil!.getTime()).toBeGreaterThanOrEqual(activeFrom.getTime() + ID_TOKEN_TTL * 1000);
    const later = new Date(row.publishedUntil!.getTime() + 1);
    forgetSigningKeys();
    expect((await currentKeyStates(later)).map((s) => s.kid)).not.toContain(oldRs.kid);
    const justBefore = await runCleanup(new Date(row.publishedUntil!.getTime() - 1));
    expect(justBefore.ran && justBefore.counts.oauthSigningKeys).toBe(0);
    const cleaned = await runCleanup(later);
    expect(cleaned.ran && cleaned.counts.oauthSigningKeys).toBe(2);
    expect((await testDb().oAuthSigningKey.findMany()).map((r) => r.kid).sort()).toEqual([...kids].sort());
  });

  it("secret:reseal re-seals the private keys with the first secret, and they open with it alone", async () => {
    const kidsBefore = (await publicJwks()).keys.map((k) => k.kid).sort();
    const newSecret = "n".repeat(40);
    undoEnv!();
    undoEnv = withEnv({ ...PROVIDER_ENV, AUTH_SECRET: `${newSecret},${TEST_AUTH_SECRET}` });
    const count = await resealColumn(signingKeyColumn, [newSecret, TEST_AUTH_SECRET]);
    expect(count).toMatchObject({ kind: "oauth-signing-key", resealed: 2, unopenable: [] });
    // Only the new secret now: the keys still open, the same ones.
    undoEnv!();
    undoEnv = withEnv({ ...PROVIDER_ENV, AUTH_SECRET: newSecret });
    forgetSigningKeys();
    expect((await publicJwks()).keys.map((k) => k.kid).sort()).toEqual(kidsBefore);
  });

  it("npm run oauth:keys:rotate adds a key per algorithm; with the provider off it refuses", async () => {
    await publicJwks();
    const result = await runInProcess("scripts/oauth-keys-rotate.ts", []);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/new signing keys .+: published now, signing from /);
    expect(await testDb().oAuthSigningKey.count()).toBe(4);
    const off = await runScript("scripts/oauth-keys-rotate.ts", [], { AUTH_PROVIDER: "false" });
    expect(off.code).toBe(1);
    expect(off.stderr).toMatch(/the OAuth provider is off/);
  });
});
