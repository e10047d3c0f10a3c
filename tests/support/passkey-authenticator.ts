// A software WebAuthn authenticator for integration tests: a P-256 (ES256) key from node:crypto,
// "none" attestation, authenticator data and clientDataJSON built byte by byte as the WebAuthn
// spec lays them out, so tests can answer our options exactly as a browser and a passkey would —
// or wrongly, on purpose (another origin or RP id, no UV flag, an old counter).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { ORIGIN } from "./http";

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;

const b64url = (bytes: Uint8Array | Buffer | string) => Buffer.from(bytes).toString("base64url");
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

/** A CBOR byte-string or text-string head (major type 2 or 3) for a length. */
function cborHead(major: 2 | 3, length: number): Buffer {
  const base = major << 5;
  if (length < 24) return Buffer.from([base | length]);
  if (length < 256) return Buffer.from([base | 24, length]);
  return Buffer.from([base | 25, length >> 8, length & 0xff]);
}
const cborBytes = (b: Buffer) => Buffer.concat([cborHead(2, b.length), b]);
const cborText = (s: string) => Buffer.concat([cborHead(3, Buffer.byteLength(s)), Buffer.from(s)]);

export type CeremonyOverrides = {
  /** The origin the "browser" puts into clientDataJSON (default: the test origin). */
  origin?: string;
  /** The RP id whose hash goes into the authenticator data (default: the options' rpId, else the origin's host). */
  rpId?: string;
  /** The user-verified flag (default true). */
  uv?: boolean;
  /** The signature counter to report (default: one more than last time; 0 stays 0 for a counter-less authenticator). */
  counter?: number;
  /** clientDataJSON's challenge instead of the options' one. */
  challenge?: string;
  /** Registration: the attestation format to claim instead of "none" (its statement stays empty). */
  fmt?: string;
};

type CreationOptions = { challenge: string; rp: { id?: string }; user: { id: string } };
type RequestOptions = { challenge: string; rpId?: string };

export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  /** The counter last reported; null: counts nothing (stays 0, as many platform passkeys do). */
  private counter: number;
  private readonly counting: boolean;
  userHandle: string | null = null;

  constructor({ counting = true }: { counting?: boolean } = {}) {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: "jwk" });
    this.publicJwk = { x: jwk.x!, y: jwk.y! };
    this.counting = counting;
    this.counter = 0;
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  get lastCounter(): number {
    return this.counter;
  }

  /** COSE_Key map {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}. */
  private coseKey(): Buffer {
    const x = Buffer.from(this.publicJwk.x, "base64url");
    const y = Buffer.from(this.publicJwk.y, "base64url");
    return Buffer.concat([Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21]), cborBytes(x), Buffer.from([0x22]), cborBytes(y)]);
  }

  private authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter >>> 0);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  private clientData(type: "webauthn.create" | "webauthn.get", challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** Answers registration options (navigator.credentials.create), as @simplewebauthn/browser's JSON. */
  register(options: CreationOptions, o: CeremonyOverrides = {}) {
    const origin = o.origin ?? ORIGIN;
    const rpId = o.rpId ?? options.rp.id ?? new URL(origin).hostname;
    this.userHandle = options.user.id;
    const flags = FLAG_UP | (o.uv === false ? 0 : FLAG_UV) | FLAG_BE | FLAG_BS | FLAG_AT;
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, this.credentialId, this.coseKey()]);
    const authData = this.authData(rpId, flags, o.counter ?? 0, attested);
    const attestationObject = Buffer.concat([
      Buffer.from([0xa3]),
      cborText("fmt"),
      cborText(o.fmt ?? "none"),
      cborText("attStmt"),
      Buffer.from([0xa0]),
      cborText("authData"),
      cborBytes(authData),
    ]);
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key" as const,
      response: {
        clientDataJSON: b64url(this.clientData("webauthn.create", o.challenge ?? options.challenge, origin)),
        attestationObject: b64url(attestationObject),
        transports: ["internal", "hybrid"],
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform" as const,
    };
  }

  /** Answers authentication options (navigator.credentials.get) with a signed assertion. */
  authenticate(options: RequestOptions, o: CeremonyOverrides = {}) {
    const origin = o.origin ?? ORIGIN;
    const rpId = o.rpId ?? options.rpId ?? new URL(origin).hostname;
    const counter = o.counter ?? (this.counting ? this.counter + 1 : 0);
    if (o.counter === undefined) this.counter = counter;
    const flags = FLAG_UP | (o.uv === false ? 0 : FLAG_UV) | FLAG_BE | FLAG_BS;
    const authData = this.authData(rpId, flags, counter);
    const clientDataJSON = this.clientData("webauthn.get", o.challenge ?? options.challenge, origin);
    const signature = sign("sha256", Buffer.concat([authData, sha256(clientDataJSON)]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key" as const,
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform" as const,
    };
  }
}
