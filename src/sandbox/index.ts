// The embedded sandbox ledger: one process that serves Soroban RPC on loopback over a local network with
// the pool contracts deployed. `Sandbox.start()` opens (or creates) the state, runs genesis on first start,
// closes ledgers on an interval and serves HTTP. Secret keys are exposed only through `secrets()`.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { contractRegistry } from '../../contracts/index.ts';
import { friendbot } from './friendbot.ts';
import {
  readInfo,
  readSecrets,
  runGenesis,
  type SandboxInfo,
  type SandboxSecrets,
  type VerificationKeyInput,
} from './genesis.ts';
import { Ledger, STANDALONE_PASSPHRASE } from './ledger.ts';
import { createRpc } from './rpc.ts';
import { createHttpServer } from './server.ts';
import { type LedgerMeta, LedgerStore, type TxRecord } from './store.ts';

export type { SandboxInfo, SandboxSecrets } from './genesis.ts';
export { parseUsdc } from './friendbot.ts';
export { STANDALONE_PASSPHRASE } from './ledger.ts';

export const DEFAULT_VKEY_PATH = fileURLToPath(
  new URL('../../build/circuits/policy_tx_2_2/verification_key.json', import.meta.url),
);

export interface SandboxOptions {
  host?: string;
  port?: number;
  /** LevelDB directory; omitted = in memory */
  dataDir?: string;
  /** ledger close interval (default 1000 ms) */
  ledgerMs?: number;
  /** snarkjs verification_key.json (path or object) for genesis; default: the built policy_tx_2_2 key */
  vkey?: VerificationKeyInput;
  /** network passphrase (default: the standalone network's); a store created with another one is refused */
  networkPassphrase?: string;
  /** called after each ledger close with the ledger and its transactions (see ledger-log.ts) */
  onLedgerClosed?: (meta: LedgerMeta, txs: readonly TxRecord[]) => void;
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
    const passphrase = opts.networkPassphrase ?? STANDALONE_PASSPHRASE;
    const ledger = new Ledger(store, registry, passphrase);
    try {
      if (!store.meta)
        await runGenesis(store, registry, ledger.networkId, passphrase, opts.vkey ?? DEFAULT_VKEY_PATH);
      const stored = readInfo(store).networkPassphrase;
      if (stored !== passphrase) {
        throw new Error(`the sandbox data was created for network "${stored}", not "${passphrase}"`);
      }
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
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(opts.port ?? 8000, opts.host ?? '127.0.0.1', () => resolve());
      });
    } catch (e) {
      // release the data directory's lock so a retry on another address can open it
      await store.close();
      throw e;
    }
    const a = server.address() as AddressInfo;
    baseUrl = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
    ledger.onClosed = opts.onLedgerClosed;
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
