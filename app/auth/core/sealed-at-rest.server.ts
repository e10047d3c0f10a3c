// Values sealed at rest in a database column — TOTP secrets, OAuth provider tokens: the one function
// pair every such value goes through. A compact JWE (dir + A256GCM) under a key derived from
// AUTH_SECRET with HKDF for one purpose, its kid naming the secret that sealed it, so rotation works
// like everywhere else in core — the first secret seals, every configured secret opens. The
// protected header binds the ciphertext to its row: copied to another user's row or column it no
// longer opens.
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { base64url, calculateJwkThumbprint } from "jose";
import { log } from "./log.server";

type SealKey = { key: Uint8Array; kid: string };
const keys = new Map<string, Promise<SealKey>>();

function sealKey(secret: string, at: SealPlace): Promise<SealKey> {
  const label = at.format?.keyLabel ?? `Vestibule sealing key (${at.purpose})`;
  const cacheKey = `${at.purpose}\u0000${label}\u0000${secret}`;
  let hit = keys.get(cacheKey);
  if (!hit) {
    hit = (async () => {
      const key = new Uint8Array(hkdfSync("sha256", secret, at.purpose, label, 32));
      return { key, kid: await calculateJwkThumbprint({ kty: "oct", k: base64url.encode(key) }) };
    })();
    // Bounded: a handful of purposes times a handful of rotation values.
    if (keys.size > 64) keys.clear();
    keys.set(cacheKey, hit);
  }
  return hit;
}

const bindingOf = (at: SealPlace) =>
  createHash("sha256")
    .update(at.format?.bindsPurpose === false ? at.row : `${at.purpose}\u0000${at.row}`)
    .digest("base64url");

/** Where a sealed value lives: what it is for (the HKDF salt) and the row (and column) it belongs to. */
export type SealPlace = {
  purpose: string;
  row: string;
  /**
   * For a purpose whose values were sealed before this pair served every purpose (OAuth tokens,
   * ADR 012), how that code derived its key and bound its row, so what it stored still opens and
   * what is sealed now reads the same. New purposes leave it out.
   */
  format?: { keyLabel: string; bindsPurpose: boolean };
};

export async function sealAtRest(value: string, at: SealPlace, secrets: readonly string[]): Promise<string> {
  const { key, kid } = await sealKey(secrets[0]!, at);
  // The compact JWE jose's CompactEncrypt makes (RFC 7516: header..iv.ciphertext.tag, the encoded
  // header as additional data), made with node:crypto at once: WebCrypto's import of the key and
  // its job on the thread pool cost more than the cipher, and a refresh grant seals its answer
  // every time (ADR 172). Any JOSE library opens it (a test opens it with jose).
  const header = Buffer.from(JSON.stringify({ alg: "dir", enc: "A256GCM", kid, "vst.bind": bindingOf(at) })).toString("base64url");
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(header, "ascii"));
  const ciphertext = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  return `${header}..${iv.toString("base64url")}.${ciphertext.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}`;
}

/** The sealed value, or null when sealed for another row or purpose, or under a secret no longer configured. */
export async function openAtRest(sealed: string, at: SealPlace, secrets: readonly string[]): Promise<string | null> {
  return (await openAtRestDetail(sealed, at, secrets))?.value ?? null;
}

/**
 * What openAtRest opens, and whether the first secret sealed it (`current`). A value opened with
 * another configured secret is stale: its owner writes it back sealed with the first (ADR 109,
 * "Values at rest"), so the old secret can be dropped without losing it.
 */
export async function openAtRestDetail(sealed: string, at: SealPlace, secrets: readonly string[]): Promise<{ value: string; current: boolean } | null> {
  try {
    // The compact JWE sealAtRest makes and nothing else (header..iv.ciphertext.tag): opened with
    // node:crypto at once, as it is sealed (a confidential client's secret is opened on every token
    // request; ADR 172). Only dir + A256GCM with a 96-bit IV and a 128-bit tag; a critical or a
    // compression header is refused, as jose refuses what it does not understand.
    const parts = sealed.split(".");
    if (parts.length !== 5 || parts[1] !== "") throw new Error("not a compact JWE with a direct key");
    const [encodedHeader, , ivText, ciphertextText, tagText] = parts as [string, string, string, string, string];
    const header = JSON.parse(Buffer.from(encodedHeader, "base64url").toString("utf8")) as Record<string, unknown>;
    if (header.alg !== "dir" || header.enc !== "A256GCM" || "crit" in header || "zip" in header) throw new Error("unexpected JWE header");
    const iv = Buffer.from(ivText, "base64url");
    const tag = Buffer.from(tagText, "base64url");
    if (iv.length !== 12 || tag.length !== 16) throw new Error("unexpected IV or tag length");
    let opener: string | undefined;
    let key: Uint8Array | undefined;
    for (const secret of secrets) {
      const k = await sealKey(secret, at);
      if (k.kid === header.kid) {
        opener = secret;
        key = k.key;
        break;
      }
    }
    if (!key) throw new Error("no configured secret matches the sealed value's kid");
    const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: 16 });
    decipher.setAAD(Buffer.from(encodedHeader, "ascii"));
    decipher.setAuthTag(tag);
    const plaintext = Buffer.concat([decipher.update(Buffer.from(ciphertextText, "base64url")), decipher.final()]);
    if (header["vst.bind"] !== bindingOf(at)) return null;
    return { value: plaintext.toString("utf8"), current: opener === secrets[0] };
  } catch (error) {
    log("warn", "sealed-value-unopened", { purpose: at.purpose, error });
    return null;
  }
}

/**
 * Writes a stale value (opened with a secret other than the first) back sealed with the first:
 * `replace` is one conditional UPDATE on the sealed value read (it returns how many rows it
 * changed), so a value changed meanwhile is left alone and nothing is ever lost. Returns the
 * value now stored — the new one, or `sealed` when the write did not happen. Never throws: a
 * failed write is logged at warn and the caller goes on with the value it opened.
 */
export async function resealStale(
  sealed: string,
  value: string,
  at: SealPlace,
  secrets: readonly string[],
  replace: (next: string) => Promise<number>,
): Promise<string> {
  try {
    const next = await sealAtRest(value, at, secrets);
    return (await replace(next)) === 1 ? next : sealed;
  } catch (error) {
    log("warn", "sealed-value-not-resealed", { purpose: at.purpose, error });
    return sealed;
  }
}

/**
 * One column of sealed values at rest, as `secret:reseal` walks it: rows by ascending id, a page
 * at a time, and the conditional UPDATE that replaces one row's value only while it still holds
 * the value read.
 */
export type SealedColumn = {
  /** What the report names (e.g. "totp-secret"). */
  kind: string;
  /** Up to `take` rows with a value in this column and an id after `after`, by ascending id. */
  page: (after: string | null, take: number) => Promise<{ id: string; sealed: string; at: SealPlace }[]>;
  /** Replaces row `id`'s value `sealed` with `next`; how many rows changed (0: it holds another value now). */
  replace: (id: string, sealed: string, next: string) => Promise<number>;
  /** The row's value now (null: the row or the value is gone), to look again after a lost race. */
  reread: (id: string) => Promise<{ sealed: string; at: SealPlace } | null>;
};

export type ResealCount = { kind: string; resealed: number; current: number; unopenable: string[] };

/**
 * Re-seals every value of `column` with the first secret, `batch` rows at a time: each row is
 * opened with the configured secrets and, when another one sealed it, replaced conditionally on
 * the value read — a row a serving instance changed meanwhile is read again, never overwritten.
 * A value no configured secret opens is left as it is and reported by row id (never the value).
 * Running it again finds every row current.
 */
export async function resealColumn(column: SealedColumn, secrets: readonly string[], batch = 200): Promise<ResealCount> {
  const count: ResealCount = { kind: column.kind, resealed: 0, current: 0, unopenable: [] };
  let after: string | null = null;
  for (;;) {
    const rows = await column.page(after, batch);
    for (const row of rows) {
      let now: { sealed: string; at: SealPlace } | null = row;
      // A lost race means the row holds a newer value: look at that one (a few times at most).
      for (let attempt = 0; now && attempt < 5; attempt++) {
        const opened = await openAtRestDetail(now.sealed, now.at, secrets);
        if (!opened) {
          count.unopenable.push(row.id);
          break;
        }
        if (opened.current) {
          count.current++;
          break;
        }
        const next = await sealAtRest(opened.value, now.at, secrets);
        if ((await column.replace(row.id, now.sealed, next)) === 1) {
          count.resealed++;
          break;
        }
        now = await column.reread(row.id);
      }
    }
    if (rows.length < batch) return count;
    after = rows[rows.length - 1]!.id;
  }
}

/**
 * A keyed hash (HMAC-SHA-256, hex) of a short secret such as a recovery code, under a key derived
 * from one AUTH_SECRET value for `purpose`: a copy of the table alone cannot be searched offline.
 * One hash per configured secret, first secret first, so lookups survive rotation.
 */
export function keyedHashes(value: string, purpose: string, secrets: readonly string[]): string[] {
  return [
    ...new Set(
      secrets.map((secret) => {
        const key = Buffer.from(hkdfSync("sha256", secret, purpose, `Vestibule keyed hash (${purpose})`, 32));
        return createHmac("sha256", key).update(value).digest("hex");
      }),
    ),
  ];
}
