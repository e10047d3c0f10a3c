// The service provider's key pair for encrypted assertions, one per connection (ADR 168): an
// RSA-2048 key and a self-signed certificate for it. The certificate is published in the
// connection's metadata (KeyDescriptor use="encryption"), the IdP encrypts the assertion to it,
// and node-saml decrypts with the private key, which is stored sealed at rest, bound to its row.
// Encryption hides the assertion from the browser; it proves nothing: the assertion inside must
// still be signed by one of the IdP's certificates (wantAssertionsSigned).
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { db } from "../../db/client.server";
import { openAtRest, sealAtRest, type SealedColumn, type SealPlace } from "../core/sealed-at-rest.server";

/** How long the encryption certificate is valid: IdPs read only its key, some check its dates. */
const CERTIFICATE_YEARS = 10;

const placeOf = (connectionId: string): SealPlace => ({ purpose: "saml-decryption-key", row: connectionId });

export type SpKeyPair = { certificate: string; privateKey: string };

// The few DER shapes a self-signed X.509 v1 certificate needs (RFC 5280 §4.1): Node makes keys and
// signatures but no certificates, and this is all an IdP reads from it (the public key).
function der(tag: number, body: Buffer): Buffer {
  const n = body.length;
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
}
const seq = (...items: Buffer[]) => der(0x30, Buffer.concat(items));
const SHA256_WITH_RSA = seq(Buffer.from("06092a864886f70d01010b", "hex"), Buffer.from("0500", "hex"));
const COMMON_NAME_OID = Buffer.from("0603550403", "hex");
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, "").slice(0, 14) + "Z"; // YYYYMMDDHHMMSSZ
  // UTCTime until 2049, GeneralizedTime after (RFC 5280 §4.1.2.5).
  return date.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(iso.slice(2))) : der(0x18, Buffer.from(iso));
}

/** The certificate's subject: the same for every connection (IdPs read only the key). */
export const SP_CERTIFICATE_NAME = "Vestibule SAML encryption";

/** A new key pair and its self-signed certificate. */
export async function newSpKeyPair(commonName = SP_CERTIFICATE_NAME): Promise<SpKeyPair> {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive, no leading zero
  const name = seq(der(0x31, seq(COMMON_NAME_OID, der(0x0c, Buffer.from(commonName.slice(0, 64), "utf8")))));
  const now = new Date();
  const tbs = seq(
    der(0x02, serial),
    SHA256_WITH_RSA,
    name,
    seq(time(now), time(new Date(now.getTime() + CERTIFICATE_YEARS * 365 * 24 * 60 * 60_000))),
    name,
    publicKey.export({ type: "spki", format: "der" }),
  );
  const signature = sign("sha256", tbs, privateKey);
  const certificate = seq(tbs, SHA256_WITH_RSA, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const lines = certificate.toString("base64").match(/.{1,64}/g)!;
  return {
    certificate: `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----`,
    privateKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

/** The private key sealed for connection `connectionId`'s row. */
export function sealSpPrivateKey(connectionId: string, privateKey: string, secrets: readonly string[]): Promise<string> {
  return sealAtRest(privateKey, placeOf(connectionId), secrets);
}

/**
 * The connection's key pair: the stored one, or (a connection made before keys existed) one made
 * now and stored unless another request stored one first — then that one is read back.
 */
export async function spKeysOf(connectionId: string, secrets: readonly string[]): Promise<SpKeyPair | null> {
  const read = async () => {
    const row = await db().samlConnection.findUnique({ where: { id: connectionId }, select: { encryptionCert: true, decryptionKey: true } });
    if (!row?.encryptionCert || !row.decryptionKey) return row ? "missing" : null;
    const privateKey = await openAtRest(row.decryptionKey, placeOf(connectionId), secrets);
    // Sealed under a secret no longer configured: the connection cannot decrypt (the log says why).
    return privateKey ? { certificate: row.encryptionCert, privateKey } : null;
  };
  const first = await read();
  if (first !== "missing") return first;
  const pair = await newSpKeyPair();
  const sealed = { encryptionCert: pair.certificate, decryptionKey: await sealSpPrivateKey(connectionId, pair.privateKey, secrets) };
  await db().samlConnection.updateMany({ where: { id: connectionId, decryptionKey: null }, data: sealed });
  const stored = await read();
  return stored === "missing" ? null : stored;
}

/** The sealed decryption keys, as `secret:reseal` walks them after an AUTH_SECRET rotation. */
export const samlDecryptionKeyColumn: SealedColumn = {
  kind: "saml-decryption-key",
  page: async (after, take) =>
    (
      await db().samlConnection.findMany({
        where: { decryptionKey: { not: null }, ...(after === null ? {} : { id: { gt: after } }) },
        orderBy: { id: "asc" },
        take,
        select: { id: true, decryptionKey: true },
      })
    ).map((row) => ({ id: row.id, sealed: row.decryptionKey!, at: placeOf(row.id) })),
  replace: async (id, sealed, next) => (await db().samlConnection.updateMany({ where: { id, decryptionKey: sealed }, data: { decryptionKey: next } })).count,
  reread: async (id) => {
    const row = await db().samlConnection.findUnique({ where: { id }, select: { decryptionKey: true } });
    return row?.decryptionKey ? { sealed: row.decryptionKey, at: placeOf(id) } : null;
  },
};
