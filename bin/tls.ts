// What --tls-cert/--tls-key offer: forward-secret AEAD suites only, modelled on Caddy's
// defaults (modules/caddytls: TLS 1.2 and 1.3; for 1.2 ECDHE with AES-GCM or
// ChaCha20-Poly1305, nothing else). Node's own default list still offers static-RSA key
// exchange (no forward secrecy) and CBC suites (LUCKY13-style padding oracles) over TLS 1.2.

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
