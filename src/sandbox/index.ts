// The embedded sandbox ledger: one process that serves Soroban RPC on loopback over a local network with
// the pool contracts deployed. `Sandbox.start()` opens (or creates) the state, runs genesis on first start,
// closes ledgers on an interval and serves HTTP. Secret keys are exposed only through `secrets()`.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { StrKey } from '@stellar/stellar-sdk';
import { contractRegistry } from '../../contracts/index.ts';
import { addr, i128 } from './contract-api.ts';
import {
  readInfo,
  readSecrets,
  runGenesis,
  type SandboxInfo,
  type SandboxSecrets,
  STARTING_BALANCE,
  type VerificationKeyInput,
} from './genesis.ts';
import { accountEntryData, accountKey, keyId } from './keys.ts';
import { Ledger, readAccount, STANDALONE_PASSPHRASE } from './ledger.ts';
import { createRpc } from './rpc.ts';
import { createHttpServer } from './server.ts';
import { LedgerStore } from './store.ts';

export type { SandboxInfo, SandboxSecrets } from './genesis.ts';
export { STANDALONE_PASSPHRASE } from './ledger.ts';

export const DEFAULT_VKEY_PATH = fileURLToPath(
  new URL('../../build/circuits/policy_tx_2_2/verification_key.json', import.meta.url),
);
/** Largest friendbot USDC grant, in whole USDC. */
const MAX_FRIENDBOT_USDC = 1_000_000_000n;

export interface SandboxOptions {
  host?: string;
  port?: number;
  /** LevelDB directory; omitted = in memory */
  dataDir?: string;
  /** ledger close interval (default 1000 ms) */
  ledgerMs?: number;
  /** snarkjs verification_key.json (path or object) for genesis; default: the built policy_tx_2_2 key */
  vkey?: VerificationKeyInput;
}

/** "12.5" → 125000000 stroops (7 decimals); undefined if not a valid non-negative amount. */
export function parseUsdc(text: string): bigint | undefined {
  const m = /^(\d{1,10})(?:\.(\d{1,7}))?$/.exec(text);
  if (!m) return undefined;
  return BigInt(m[1] as string) * 10_000_000n + BigInt((m[2] ?? '').padEnd(7, '0'));
}

export class Sandbox {
  private constructor(
    readonly ledger: Ledger,
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(opts: SandboxOptions = {}): Promise<Sandbox> {
    const store = await LedgerStore.open(opts.dataDir);
    const registry = contractRegistry();
    const ledger = new Ledger(store, registry, STANDALONE_PASSPHRASE);
    try {
      if (!store.meta)
        await runGenesis(
          store,
          registry,
          ledger.networkId,
          STANDALONE_PASSPHRASE,
          opts.vkey ?? DEFAULT_VKEY_PATH,
        );
    } catch (e) {
      await store.close();
      throw e;
    }
    let baseUrl = '';
    const rpc = createRpc(ledger, () => `${baseUrl}/friendbot`);
    const server = createHttpServer({
      rpc,
      info: () => readInfo(store),
      friendbot: (q) => friendbot(ledger, q),
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 8000, opts.host ?? '127.0.0.1', () => resolve());
    });
    const a = server.address() as AddressInfo;
    baseUrl = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
    ledger.start(opts.ledgerMs ?? 1000);
    return new Sandbox(ledger, server, baseUrl);
  }

  get rpcUrl(): string {
    return `${this.url}/rpc`;
  }

  get info(): SandboxInfo {
    return readInfo(this.ledger.store);
  }

  /** Secret keys of the well-known accounts, for the operator tooling in this process (never served over HTTP). */
  secrets(): SandboxSecrets {
    return readSecrets(this.ledger.store);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    await this.ledger.stop();
    await this.ledger.store.close();
  }
}

async function friendbot(ledger: Ledger, q: URLSearchParams): Promise<{ status: number; body: unknown }> {
  const bad = (detail: string) => ({ status: 400, body: { type: 'bad_request', status: 400, detail } });
  const address = q.get('addr') ?? '';
  if (!StrKey.isValidEd25519PublicKey(address)) return bad('addr must be a Stellar account address (G…)');
  const usdcText = q.get('usdc');
  let usdc = 0n;
  if (usdcText !== null) {
    const parsed = parseUsdc(usdcText);
    if (parsed === undefined) return bad('usdc must be a non-negative amount with at most 7 decimals');
    if (parsed > MAX_FRIENDBOT_USDC * 10_000_000n) return bad(`usdc must be at most ${MAX_FRIENDBOT_USDC}`);
    usdc = parsed;
  }
  const exists = readAccount(ledger.store, address) !== undefined;
  if (exists && usdc === 0n) return bad('account already funded; ask for usdc=N to mint test USDC');
  const { token } = readInfo(ledger.store).contracts;
  let sequence = 0;
  await ledger.runInternal(async (host, overlay, ledgerSequence) => {
    sequence = ledgerSequence;
    if (!readAccount(overlay, address)) {
      overlay.put(
        keyId(accountKey(address)),
        accountEntryData(address, STARTING_BALANCE, BigInt(ledgerSequence) << 32n),
      );
    }
    if (usdc > 0n) await host.invoke(token, 'mint', [addr(address), i128(usdc)]);
  });
  return {
    status: 200,
    body: { successful: true, account: address, created: !exists, usdc: usdc.toString(), ledger: sequence },
  };
}
