// The sandbox engine: one process that serves Soroban RPC on loopback over a local Stellar network whose
// contracts run on the real Soroban host (soroban-host.ts). `Sandbox.start({ network })` opens (or creates)
// the state, writes the genesis ledger on first start, serves HTTP, deploys the network's contracts through
// its own RPC (ledgers close as soon as a transaction waits, until the deployment is done), then closes
// ledgers on an interval. The network (its accounts, deployment and friendbot extras) is a parameter: the
// engine knows no particular contract. Secrets are exposed only through `secrets()`.

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rpc as stellarRpc } from '#stellar-sdk';
import { friendbot } from './friendbot.ts';
import {
  configSettingEntries,
  deployNativeAssetContract,
  deployNetwork,
  ENGINE,
  readInfo,
  readSecrets,
  writeGenesisLedger,
} from './genesis.ts';
import { SorobanHost } from './soroban-host.ts';
import { STANDALONE_PASSPHRASE } from '../ledger/networks.ts';
import { Chain } from './chain.ts';
import type { NetworkDefinition, NetworkInfo } from './network.ts';
import { createRpc } from './rpc.ts';
import { createHttpServer } from './server.ts';
import { BASE_RESERVE, PROTOCOL_VERSION } from './xdr-records.ts';
import { type LedgerMeta, LedgerState, type TxRecord } from './ledger-state.ts';

export type { NetworkDefinition, NetworkInfo } from './network.ts';
export { STARTING_BALANCE } from './genesis.ts';

export interface SandboxOptions {
  host?: string;
  port?: number;
  /** LevelDB directory; omitted = in memory */
  dataDir?: string;
  /** ledger close interval (default 1000 ms) */
  ledgerMs?: number;
  /** network passphrase (default: the standalone network's); data created with another one is refused */
  networkPassphrase?: string;
  /** called after each ledger close with the ledger and its transactions (see ledger-log.ts) */
  onLedgerClosed?: (meta: LedgerMeta, txs: readonly TxRecord[]) => void;
  /** the network's time, milliseconds since the epoch (default: the system clock); tests move their own */
  clock?: () => number;
  /** called when a ledger close fails (see ledger-log.ts); default: a process warning */
  onCloseFailed?: (error: Error) => void;
  /**
   * serve `POST /sandbox/advance?ledgers=N`, which closes the next ledger N sequence numbers on (TTLs run out):
   * for tests and demos of archival only; anyone who reaches the port can archive the network's state
   */
  ledgerControl?: boolean;
  /** also serve over HTTPS, on `host:port` (default: the HTTP host, an ephemeral port) with this certificate */
  tls?: { host?: string; port?: number; cert: string; key: string };
}

/** The header the genesis deployment's own RPC requests carry (a random token of this process). */
const GENESIS_TOKEN_HEADER = 'x-sandbox-genesis-token';

function carriesToken(req: IncomingMessage, token: Buffer): boolean {
  const given = req.headers[GENESIS_TOKEN_HEADER];
  if (typeof given !== 'string' || !/^[0-9a-f]{64}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(given, 'hex'), token);
}

export class Sandbox<Info extends object = object, Secrets extends object = object> {
  readonly #servers: Server[];

  private constructor(
    readonly chain: Chain,
    servers: Server[],
    readonly url: string,
    /** the HTTPS base URL, when the sandbox serves HTTPS too */
    readonly httpsUrl: string | undefined,
  ) {
    this.#servers = servers;
  }

  static async start<I extends object, S extends object>(
    opts: SandboxOptions & { network: NetworkDefinition<I, S> },
  ): Promise<Sandbox<I, S>> {
    const state = await LedgerState.open(opts.dataDir);
    const passphrase = opts.networkPassphrase ?? STANDALONE_PASSPHRASE;
    let chain: Chain;
    try {
      if (!state.meta) await writeGenesisLedger(state, passphrase, opts.network);
      const engine = state.docs.get('engine');
      if (engine?.name !== ENGINE) {
        throw new Error(
          `the sandbox data in ${opts.dataDir} was written by an older version of the sandbox: remove the directory to start a new network`,
        );
      }
      if (engine.passphrase !== passphrase) {
        throw new Error(
          `the sandbox data was created for network "${engine.passphrase}", not "${passphrase}"`,
        );
      }
      const host = new SorobanHost({
        networkPassphrase: passphrase,
        protocolVersion: PROTOCOL_VERSION,
        baseReserve: BASE_RESERVE,
        configSettings: configSettingEntries(state),
      });
      chain = new Chain(state, host, passphrase, opts.clock);
    } catch (e) {
      await state.close();
      throw e;
    }
    let baseUrl = '';
    const rpc = createRpc(chain, () => `${baseUrl}/friendbot`);
    // Until the genesis deployment is done, only the deployment's own requests (which carry this process's
    // random token) are served; everyone else is told to retry (503).
    const genesisToken = randomBytes(32);
    let starting = true;
    const handlers = {
      rpc,
      info: () => readInfo(state),
      friendbot: (q: URLSearchParams) => friendbot(chain, opts.network, q),
      starting: (req: IncomingMessage) => starting && !carriesToken(req, genesisToken),
      ...(opts.ledgerControl && {
        advance: async (ledgers: number) => {
          await chain.advance(ledgers);
          return { sequence: chain.latest.sequence };
        },
      }),
    };
    const servers: Server[] = [];
    const listen = async (server: Server, port: number, host: string): Promise<string> => {
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      const a = server.address() as AddressInfo;
      return `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
    };
    const host = opts.host ?? '127.0.0.1';
    let httpsUrl: string | undefined;
    try {
      baseUrl = `http://${await listen(createHttpServer(handlers), opts.port ?? 8000, host)}`;
      if (opts.tls) {
        const tlsServer = createHttpServer(handlers, opts.tls);
        httpsUrl = `https://${await listen(tlsServer, opts.tls.port ?? 0, opts.tls.host ?? host)}`;
      }
    } catch (e) {
      for (const server of servers) server.close();
      // release the data directory's lock so a retry on another address can open it
      await state.close();
      throw e;
    }
    chain.onClosed = opts.onLedgerClosed;
    chain.onCloseFailed = opts.onCloseFailed;
    try {
      // the contracts are deployed like on any network, through this sandbox's own RPC
      chain.closeWhenPending = true;
      const ledger = {
        server: new stellarRpc.Server(`${baseUrl}/rpc`, {
          allowHttp: true,
          headers: { [GENESIS_TOKEN_HEADER]: genesisToken.toString('hex') },
        }),
        networkPassphrase: passphrase,
        pollMs: 5,
      };
      await deployNativeAssetContract(state, passphrase, ledger.server);
      await deployNetwork(state, passphrase, opts.network, { passphrase, ledger });
    } catch (e) {
      for (const server of servers) server.close();
      await chain.stop();
      await state.close();
      throw new Error(`the sandbox could not deploy its contracts: ${(e as Error).message}`);
    } finally {
      chain.closeWhenPending = false;
    }
    starting = false;
    chain.start(opts.ledgerMs ?? 1000);
    return new Sandbox<I, S>(chain, servers, baseUrl, httpsUrl);
  }

  /**
   * Sandbox only: closes the next ledger `ledgers` sequence numbers after the latest, as if those between had
   * closed empty, so that TTLs run out (see `Chain.advance`). Resolves once it is committed.
   */
  advanceLedgers(ledgers: number): Promise<void> {
    return this.chain.advance(ledgers);
  }

  get rpcUrl(): string {
    return `${this.url}/rpc`;
  }

  /** The RPC over HTTPS (`tls` given), e.g. for clients that refuse http:// RPCs. */
  get httpsRpcUrl(): string | undefined {
    return this.httpsUrl && `${this.httpsUrl}/rpc`;
  }

  /** The network's public info (served at /sandbox/info). */
  get info(): NetworkInfo<Info> {
    return readInfo<Info>(this.chain.state);
  }

  /** The network's secrets, for the operator tooling in this process (never served over HTTP). */
  secrets(): Secrets {
    return readSecrets<Secrets>(this.chain.state);
  }

  async close(): Promise<void> {
    await Promise.all(
      this.#servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
    await this.chain.stop();
    await this.chain.state.close();
  }
}
