// What --tls-cert/--tls-key offer: forward-secret AEAD suites only, modelled on Caddy's
// defaults (modules/caddytls: TLS 1.2 and 1.3; for 1.2 ECDHE with AES-GCM or
// ChaCha20-Poly1305, nothing else). Node's own default list still offers static-RSA key
// exchange (no forward secrecy) and CBC suites (LUCKY13-style padding oracles) over TLS 1.2.

import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import type { SecureContextOptions, TlsOptions } from 'node:tls';

/** `--tls-min-version`: the oldest protocol a client may use. */
export type TlsMinVersion = 'TLSv1.2' | 'TLSv1.3';

// TLS 1.3's suites are all AEAD and forward-secret; OpenSSL names them apart from 1.2's.
// In OpenSSL's default order.
const TLS13_SUITES = ['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256'];
// TLS 1.2: ephemeral ECDH key exchange, authenticated encryption; ECDSA and RSA certificates.
// In Caddy's order for machines with AES instructions.
const TLS12_SUITES = [
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
];

/** The protocol and cipher options for node:https, without the certificate and key. */
export function tlsPolicy(
  minVersion: TlsMinVersion,
): Pick<TlsOptions, 'minVersion' | 'ciphers' | 'honorCipherOrder'> & Pick<SecureContextOptions, 'minVersion'> {
  return {
    minVersion,
    ciphers: [...TLS13_SUITES, ...TLS12_SUITES].join(':'),
    // The server's order, strongest first, not whatever a client lists first.
    honorCipherOrder: true,
  };
}

/** A file given for TLS: the flag that named it, its path and what it holds. */
export interface TlsFile {
  readonly flag: string;
  readonly file: string;
  readonly pem: Buffer;
}

/**
 * Why `cert` and `key` cannot serve TLS, naming the file and what to give instead; or
 * `undefined` when the key is a private key, the certificate a certificate, and the key
 * the certificate's (OpenSSL's own words, `error:1E08010C:DECODER routines::unsupported`,
 * say none of this).
 */
export function tlsPairProblem(cert: TlsFile, key: TlsFile): string | undefined {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key.pem);
  } catch {
    return `${key.flag} ${key.file} is not a usable private key: ${keyTrouble(key.pem.toString('latin1'))}`;
  }
  let certificate: X509Certificate;
  try {
    // X509Certificate takes DER too, node:tls only PEM.
    if (!cert.pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('not PEM');
    certificate = new X509Certificate(cert.pem);
  } catch {
    return `${cert.flag} ${cert.file} is not a usable certificate: ${certTrouble(cert.pem.toString('latin1'))}`;
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    return `${key.flag} ${key.file} is not the key of the certificate in ${cert.flag} ${cert.file}: give the private key the certificate was issued for (after a renewal, the new key with the new certificate)`;
  }
  return undefined;
}

function keyTrouble(text: string): string {
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(text))
    return 'it is encrypted with a passphrase, which the service cannot type; give it unencrypted (openssl pkey -in FILE -out NEW), readable only by the service';
  if (text.includes('-----BEGIN CERTIFICATE-----') && !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text))
    return "it holds a certificate, not a private key: are --tls-cert and --tls-key swapped? A private key's file begins with -----BEGIN PRIVATE KEY-----";
  return 'give the private key as a PEM file, the one that begins with -----BEGIN PRIVATE KEY----- (or RSA or EC PRIVATE KEY)';
}

function certTrouble(text: string): string {
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text) && !text.includes('-----BEGIN CERTIFICATE-----'))
    return "it holds a private key, not a certificate: are --tls-cert and --tls-key swapped? A certificate's file begins with -----BEGIN CERTIFICATE-----";
  return 'give the certificate (with its chain, if any) as a PEM file, the one that begins with -----BEGIN CERTIFICATE-----';
}

/**
 * What OpenSSL refused of a pair that parses and matches, in words: its security level
 * (a key or a signature too weak), else its own message with what a usable pair is.
 */
export function tlsRefusal(cert: string, key: string, message: string): string {
  if (/key too small/.test(message))
    return `--tls-key ${key} is too short a key for OpenSSL (${message}): give an RSA key of at least 2048 bits or an EC key, with a certificate issued for it`;
  if (/md too weak/.test(message))
    return `--tls-cert ${cert} is signed with a hash OpenSSL refuses (${message}): have it issued anew with SHA-256`;
  return `--tls-cert ${cert} and --tls-key ${key} are refused by OpenSSL (${message}): give a PEM certificate and the PEM private key issued with it`;
}
