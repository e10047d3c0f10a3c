// The IdP certificates of a SAML connection (ADR 153, 167): read from PEM text or metadata, kept
// as PEM, named on the page by their SHA-256 fingerprint (what an IdP's console shows too).
import { X509Certificate } from "node:crypto";

/** At most this many certificates per connection (rotation needs two; a few spare). */
export const MAX_CERTIFICATES = 5;

/** A PEM certificate, checked by parsing it; SHA-1-signed certificates are fine (only the key is used). */
export function normalizeCertificate(pem: string): string {
  const body = pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
  const der = Buffer.from(body, "base64");
  new X509Certificate(der); // throws on anything that is not a certificate
  const lines = body.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----`;
}

/** The PEM certificates in a text (one or several BEGIN/END blocks). */
export function certificatesIn(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
}

export type CertificateSummary = { fingerprint: string; subject: string; notAfter: string | null };

/** The SHA-256 fingerprint (colon-separated hex, as IdP consoles show it), the subject and the end date. */
export function describeCertificate(pem: string): CertificateSummary {
  try {
    const cert = new X509Certificate(pem);
    const notAfter = new Date(cert.validTo);
    return { fingerprint: cert.fingerprint256, subject: cert.subject.replace(/\n/g, ", "), notAfter: Number.isNaN(notAfter.getTime()) ? null : notAfter.toISOString() };
  } catch {
    return { fingerprint: "", subject: "", notAfter: null };
  }
}
