// HOST:PORT parsing shared by every command (`sandbox --listen`, `start --sandbox/--prover`,
// `prover --listen`) and the prover daemon, so they accept and refuse the same addresses with the
// same message; the proxy's default address; and a check that an address can be bound right now. It sits
// below the CLI, the proxy and the daemon, which must not import the CLI.
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';

/**
 * Where `pool-proxy start` and `pool-proxy prover` serve the prover daemon unless told otherwise. Every
 * default port of the service lies below 32768: Linux hands out outgoing connections' local ports from
 * 32768–60999 (`/proc/sys/net/ipv4/ip_local_port_range`), and a connection of any process holding the
 * port there makes a listen on it fail with EADDRINUSE — which is how a restart once failed on gRPC's
 * customary 50051.
 */
export const DEFAULT_PROVER_LISTEN = '127.0.0.1:8401';

export interface ListenAddress {
  /** Host name or IP address, without the brackets of an IPv6 literal. */
  host: string;
  port: number;
}

/** Where the proxy listens without POOL_PROXY_HOST / POOL_PROXY_PORT. */
export const DEFAULT_PROXY_HOST = '127.0.0.1';
export const DEFAULT_PROXY_PORT = 8080;

/** "127.0.0.1:8000", "localhost:0" or "[::1]:8000" → its parts; anything else is an Error naming `flag`. */
export function parseListen(text: string, flag = '--listen'): ListenAddress {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || port > 65535) throw new Error(`${flag} must be HOST:PORT, got ${text}`);
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port };
}

/**
 * Whether `host:port` can be bound right now: undefined when it can (the probe is closed again at once), else
 * the error code (EADDRINUSE when another process listens there, EADDRNOTAVAIL for an address this host does
 * not have, EACCES for a port this user may not bind…).
 */
export async function bindError({ host, port }: ListenAddress): Promise<string | undefined> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, resolve);
    });
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'ERROR';
  }
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return undefined;
}

/** host and port back to host:port as servers bind it, bracketing an IPv6 literal ("[::1]:8000"). */
export function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A loopback port free right now (for child processes that must be told their ports in advance). */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
