// Starts a real proxy on a free loopback port with a fresh data directory.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Env, loadConfig, type ProxyConfig } from '../../../src/proxy/config.ts';
import { type ProxyHandle, startProxy } from '../../../src/proxy/server.ts';
import { silentLogger } from '../../../src/proxy/util/logger.ts';

export interface TestProxy extends ProxyHandle {
  config: ProxyConfig;
  masterKey: Uint8Array;
  /** Headers that make a request the operator's (its token, which the proxy keeps in its data directory). */
  operator: Record<string, string>;
}

/** The operator's Authorization header for the proxy configured by `config`. */
export function operatorHeaders(config: ProxyConfig): Record<string, string> {
  return operatorHeadersFrom(config.operator.tokenFile);
}

/** The operator's Authorization header from its token file (`operator.token` in a data directory). */
export function operatorHeadersFrom(tokenFile: string): Record<string, string> {
  return { authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` };
}

export async function startTestProxy(env: Env = {}): Promise<TestProxy> {
  const masterKey = randomBytes(32);
  const config = loadConfig({
    POOL_PROXY_PORT: '0',
    POOL_PROXY_DATA_DIR: mkdtempSync(join(tmpdir(), 'pp-proxy-')),
    POOL_PROXY_MASTER_KEY: Buffer.from(masterKey).toString('hex'),
    POOL_PROXY_PUBLIC_URL: 'http://proxy.test:8080',
    // A closed port: tests that need the ledger pass their own URL.
    POOL_PROXY_RPC_URL: 'http://127.0.0.1:9/rpc',
    ...env,
  });
  const handle = await startProxy(config, { logger: silentLogger });
  return { ...handle, config, masterKey: new Uint8Array(masterKey), operator: operatorHeaders(config) };
}
