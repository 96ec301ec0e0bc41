// The sandbox's TLS certificate, for serving its RPC over HTTPS (clients such as the official x402 client
// refuse http:// RPCs). Made once in a directory (`sandbox-tls-cert.pem`, `sandbox-tls-key.pem`, the key
// mode 0600) with the `selfsigned` library: EC P-256, SHA-256, valid for localhost, 127.0.0.1, ::1 and the
// host the sandbox listens on, for one year; made again when it has expired or names other hosts. Clients
// trust it as its own authority, e.g. `NODE_EXTRA_CA_CERTS=<cert path>` for Node.js.
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { generate } from 'selfsigned';

export interface SandboxCertificate {
  certPath: string;
  keyPath: string;
  cert: string;
  key: string;
}

const DAY_MS = 86_400_000;

/** Names the certificate is valid for: the loopback names and `host` (an IP or a DNS name). */
function namesFor(host: string | undefined): string[] {
  const names = ['localhost', '127.0.0.1', '::1'];
  if (host && host !== '0.0.0.0' && host !== '::' && !names.includes(host)) names.push(host);
  return names;
}

function usable(certPem: string, names: string[]): boolean {
  try {
    const cert = new X509Certificate(certPem);
    if (Date.parse(cert.validTo) < Date.now() + DAY_MS) return false;
    return names.every((n) => (isIP(n) ? cert.checkIP(n) : cert.checkHost(n)) !== undefined);
  } catch {
    return false;
  }
}

/** The certificate in `dir` for a sandbox listening on `host`, made (or made again) when needed. */
export async function sandboxCertificate(dir: string, host?: string): Promise<SandboxCertificate> {
  const certPath = join(dir, 'sandbox-tls-cert.pem');
  const keyPath = join(dir, 'sandbox-tls-key.pem');
  const names = namesFor(host);
  if (existsSync(certPath) && existsSync(keyPath)) {
    const cert = readFileSync(certPath, 'utf8');
    if (usable(cert, names)) return { certPath, keyPath, cert, key: readFileSync(keyPath, 'utf8') };
  }
  const notBeforeDate = new Date(Date.now() - 60_000);
  const pems = await generate([{ name: 'commonName', value: 'privacy-pool-proxy sandbox' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + 365 * DAY_MS),
    extensions: [
      // its own authority: a client that trusts this certificate needs nothing else
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: names.map((n) => (isIP(n) ? { type: 7 as const, ip: n } : { type: 2 as const, value: n })),
      },
    ],
  });
  mkdirSync(dir, { recursive: true });
  writeFileSync(keyPath, pems.private, { mode: 0o600 });
  writeFileSync(certPath, pems.cert);
  return { certPath, keyPath, cert: pems.cert, key: pems.private };
}
