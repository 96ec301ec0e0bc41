// The proxy's client of the chain (the embedded sandbox or a Stellar network), its one path for
// transactions, over Soroban RPC (`rpc.Server`): build an invocation, simulate it,
// assemble resources and fees, sign, send, and poll until the ledger decides. Sandbox and testnet
// differ only in URL and passphrase. Transactions from one source account are serialised so their
// sequence numbers cannot collide. State archived while the pool sat idle is brought back on the way:
// since protocol 23 a simulation lists the archived entries an invocation reads and its transaction restores
// them itself; an RPC that answers with a restore preamble instead gets the RestoreFootprint transaction it
// asks for first (paid by the invocation's signer, or by the configured `restorer` for transactions a wallet
// signs), and the invocation is simulated again.
import {
  type Account,
  BASE_FEE,
  Contract,
  type FeeBumpTransaction,
  type Keypair,
  Operation,
  rpc,
  type Transaction,
  TransactionBuilder,
  type xdr,
} from '#stellar-sdk';
import {
  type ContractError,
  type ContractIds,
  contractErrorOf,
  type HostErrorInfo,
  hostErrorOf,
} from '../../ledger/contract-errors.ts';
import { DomainError } from '../domain/errors.ts';
import { KeyedMutex } from '../util/keyed-mutex.ts';
import { rpcServer } from '../../ledger/rpc-server.ts';

export interface ChainClientSettings {
  rpcUrl: string;
  networkPassphrase: string;
  baseFee: number;
  txTimeoutSeconds: number;
  confirmTimeoutMs: number;
  /** The deployment's contracts, to name the contract errors of refused transactions. */
  contracts?: ContractIds;
  /**
   * Pays and signs the RestoreFootprint an RPC may ask for before a transaction someone else signs (a wallet's
   * deposit); without it, such a simulation is refused as before. Its own transactions are serialised with
   * this client's other transactions from the same account.
   */
  restorer?: Keypair;
}

/** What a simulation asks to restore first: the RestoreFootprint's Soroban data and resource fee. */
type RestorePreamble = rpc.Api.SimulateTransactionRestoreResponse['restorePreamble'];

/** Restores before one invocation: each may reveal more archived state, but never more than this. */
const RESTORE_ROUNDS = 3;

export interface Confirmed {
  hash: string;
  ledger: number;
  returnValue?: xdr.ScVal;
}

export class ChainClient {
  readonly server: rpc.Server;
  readonly settings: ChainClientSettings;
  readonly #sources = new KeyedMutex();

  constructor(settings: ChainClientSettings) {
    this.settings = settings;
    this.server = rpcServer(settings.rpcUrl);
  }

  get passphrase(): string {
    return this.settings.networkPassphrase;
  }

  /**
   * Builds `contract.method(args)` with `source` as transaction source, simulated and assembled (unsigned).
   * A restore the RPC asks for first is paid by the configured `restorer` (refused without one).
   */
  async prepareInvocation(
    source: string | Account,
    contractId: string,
    method: string,
    args: xdr.ScVal[],
  ): Promise<Transaction> {
    const restorer = this.settings.restorer;
    return this.#prepare({
      source,
      call: { contractId, method, args },
      restore: restorer
        ? (preamble) => this.#sources.run(restorer.publicKey(), () => this.#restore(restorer, preamble))
        : undefined,
    });
  }

  /** Simulates and assembles one invocation, restoring archived state first when the RPC asks for it. */
  async #prepare(p: {
    source: string | Account;
    call: { contractId: string; method: string; args: xdr.ScVal[] };
    restore: ((preamble: RestorePreamble) => Promise<void>) | undefined;
  }): Promise<Transaction> {
    const { contractId, method, args } = p.call;
    for (let round = 0; ; round++) {
      const account = typeof p.source === 'string' ? await this.#account(p.source) : p.source;
      const raw = new TransactionBuilder(account, {
        fee: String(Math.max(this.settings.baseFee, Number(BASE_FEE))),
        networkPassphrase: this.passphrase,
      })
        .addOperation(new Contract(contractId).call(method, ...args))
        .setTimeout(this.settings.txTimeoutSeconds)
        .build();
      const simulation = await rpcCall('simulateTransaction', () => this.server.simulateTransaction(raw));
      if (rpc.Api.isSimulationError(simulation)) {
        throw new LedgerRejected(
          `simulation of ${method} failed: ${firstLine(simulation.error)}`,
          contractErrorOf(simulation, this.settings.contracts ?? {}),
        );
      }
      if (!rpc.Api.isSimulationRestore(simulation)) return rpc.assembleTransaction(raw, simulation).build();
      if (!p.restore || round >= RESTORE_ROUNDS) {
        throw new DomainError('ledger_rejected', `simulation of ${method} needs a state restore first`);
      }
      await p.restore(simulation.restorePreamble);
    }
  }

  /**
   * Sends the RestoreFootprint a simulation asked for, from `payer`'s account (the caller holds its lock),
   * and waits until it landed.
   */
  async #restore(payer: Keypair, preamble: RestorePreamble): Promise<void> {
    const account = await this.#account(payer.publicKey());
    const inclusion = Math.max(this.settings.baseFee, Number(BASE_FEE));
    const tx = new TransactionBuilder(account, {
      fee: (BigInt(inclusion) + BigInt(preamble.minResourceFee)).toString(),
      networkPassphrase: this.passphrase,
    })
      .setSorobanData(preamble.transactionData.build())
      .addOperation(Operation.restoreFootprint({}))
      .setTimeout(this.settings.txTimeoutSeconds)
      .build();
    tx.sign(payer);
    await this.submitAndConfirm(tx);
  }

  /**
   * Restores the archived state a simulation's restore preamble names (a RestoreFootprint paid and signed by
   * `payer`), for operators who restore by hand what an RPC refuses to restore itself.
   */
  async restoreFootprint(payer: Keypair, preamble: RestorePreamble): Promise<void> {
    await this.#sources.run(payer.publicKey(), () => this.#restore(payer, preamble));
  }

  /** Reads a contract value by simulating a call (no transaction is sent). */
  async read(source: string, contractId: string, method: string, args: xdr.ScVal[] = []): Promise<xdr.ScVal> {
    const account = await this.#account(source);
    const raw = new TransactionBuilder(account, { fee: BASE_FEE, networkPassphrase: this.passphrase })
      .addOperation(new Contract(contractId).call(method, ...args))
      .setTimeout(30)
      .build();
    const simulation = await rpcCall('simulateTransaction', () => this.server.simulateTransaction(raw));
    if (!rpc.Api.isSimulationSuccess(simulation) || simulation.result === undefined) {
      throw new LedgerRejected(
        `reading ${method} failed`,
        contractErrorOf(simulation, this.settings.contracts ?? {}),
      );
    }
    return simulation.result.retval;
  }

  /**
   * Prepares, signs with `signer` (the source) and submits, holding the source's lock throughout. `hooks`
   * let a caller journal the signed transaction (hash and time bound) before it is sent, and mark the send.
   * The lock serialises this client's transactions; another process (or client) spending from the same
   * account can still take the sequence number first, and the ledger then refuses ours at submission with
   * txBadSeq, having applied nothing. Such a transaction is built, signed (and handed to `hooks.signed`)
   * again on the account's current sequence, up to BAD_SEQ_ATTEMPTS times in all.
   */
  async invokeAndConfirm(
    signer: Keypair,
    contractId: string,
    method: string,
    args: xdr.ScVal[],
    hooks: SendHooks = {},
  ): Promise<Confirmed> {
    return this.#sources.run(signer.publicKey(), async () => {
      for (let attempt = 1; ; attempt++) {
        const tx = await this.#prepare({
          source: signer.publicKey(),
          call: { contractId, method, args },
          // the signer pays any restore first; this lock on its account is already held
          restore: (preamble) => this.#restore(signer, preamble),
        });
        tx.sign(signer);
        await hooks.signed?.({ hash: txHashOf(tx), maxTime: Number(tx.timeBounds?.maxTime ?? 0) });
        try {
          return await this.submitAndConfirm(tx, hooks);
        } catch (error) {
          const stale = error instanceof LedgerRejected && error.resultCode === 'txBadSeq';
          if (!stale || attempt >= BAD_SEQ_ATTEMPTS) throw error;
        }
      }
    });
  }

  /** Sends a signed transaction and waits for SUCCESS; anything else is `ledger_rejected` (nothing applied). */
  async submitAndConfirm(tx: Transaction | FeeBumpTransaction, hooks: SendHooks = {}): Promise<Confirmed> {
    const hash = txHashOf(tx);
    let sent: rpc.Api.SendTransactionResponse;
    try {
      sent = await this.#send(tx);
    } catch (error) {
      throw uncertain(hash, error);
    }
    if (sent.status !== 'ERROR') hooks.sent?.();
    if (sent.status === 'ERROR') {
      const code = resultCodeOf(sent.errorResult);
      const rejected = new LedgerRejected(
        `the ledger refused the transaction: ${code ?? 'no result'}`,
        contractErrorOf(sent, this.settings.contracts ?? {}),
        hash,
      );
      rejected.resultCode = code;
      throw rejected;
    }
    try {
      return await this.waitFor(hash);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'ledger_rejected') throw error;
      throw uncertain(hash, error);
    }
  }

  /** Polls getTransaction until the ledger decides or the confirm timeout passes. */
  async waitFor(hash: string): Promise<Confirmed> {
    // A timeout on waiting for the network (monotonic, as a timer is), not a time decision: not the proxy's clock.
    const deadline = performance.now() + this.settings.confirmTimeoutMs;
    for (;;) {
      const status = await rpcCall('getTransaction', () => this.server.getTransaction(hash));
      if (status.status === rpc.Api.GetTransactionStatus.SUCCESS) {
        return { hash, ledger: status.ledger, returnValue: status.returnValue };
      }
      if (status.status === rpc.Api.GetTransactionStatus.FAILED) {
        const contractError = contractErrorOf(status, this.settings.contracts ?? {});
        const hostError = contractError ? undefined : hostErrorOf(status);
        const rejected = new LedgerRejected(
          `transaction ${hash} failed on the ledger${hostError ? ` (host error ${hostError.type}, ${hostError.code})` : ''}; nothing was applied`,
          contractError,
          hash,
        );
        rejected.hostError = hostError;
        throw rejected;
      }
      if (performance.now() > deadline) throw new UncertainOutcome(hash, undefined);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Status of a transaction sent earlier (crash recovery): SUCCESS, FAILED or NOT_FOUND. */
  async status(hash: string): Promise<{ status: 'SUCCESS' | 'FAILED' | 'NOT_FOUND'; ledger?: number }> {
    const result = await rpcCall('getTransaction', () => this.server.getTransaction(hash));
    if (result.status === rpc.Api.GetTransactionStatus.SUCCESS)
      return { status: 'SUCCESS', ledger: result.ledger };
    if (result.status === rpc.Api.GetTransactionStatus.FAILED)
      return { status: 'FAILED', ledger: result.ledger };
    return { status: 'NOT_FOUND' };
  }

  async #send(tx: Transaction | FeeBumpTransaction): Promise<rpc.Api.SendTransactionResponse> {
    for (let attempt = 0; ; attempt++) {
      const sent = await rpcCall('sendTransaction', () => this.server.sendTransaction(tx));
      if (sent.status !== 'TRY_AGAIN_LATER' || attempt >= 20) return sent;
      await new Promise((r) => setTimeout(r, 250 * (attempt + 1)));
    }
  }

  async #account(address: string): Promise<Account> {
    try {
      return await this.server.getAccount(address);
    } catch (error) {
      throw new DomainError(
        'ledger_rejected',
        `account ${address} does not exist on the ledger (fund it first)`,
        { cause: error },
      );
    }
  }
}

/**
 * The ledger refused: nothing was applied. `contractError` names the contract error that caused it (read from
 * the diagnostic events), when a contract raised one.
 */
export class LedgerRejected extends DomainError {
  readonly contractError: ContractError | undefined;
  /** A host error (e.g. Storage/ExceededLimit) when no contract error explains the failure. */
  hostError: HostErrorInfo | undefined;
  /** The transaction result code when the ledger refused it at submission (e.g. txBadSeq). */
  resultCode: string | undefined;
  constructor(detail: string, contractError: ContractError | undefined, txHash?: string) {
    super(
      'ledger_rejected',
      contractError ? `${detail} (${contractError.contract}: ${contractError.name})` : detail,
      {
        extra: txHash === undefined ? undefined : { txHash },
      },
    );
    this.contractError = contractError;
  }
}

/** Builds and signs of one invocation when another spender keeps taking the sequence number first. */
const BAD_SEQ_ATTEMPTS = 3;

export interface SendHooks {
  /** Awaited after signing and before sending: the transaction's hash and time bound (unix seconds, 0 = none). */
  signed?: (tx: { hash: string; maxTime: number }) => Promise<void>;
  /** Called once the ledger accepted the transaction for inclusion. */
  sent?: () => void;
}

export function txHashOf(tx: Transaction | FeeBumpTransaction): string {
  return Buffer.from(tx.hash()).toString('hex');
}

/**
 * A transaction that may or may not land (sent, or possibly sent, and not decided in time). The caller
 * must keep its effects pending and reconcile by hash later, never treat it as failed.
 */
export class UncertainOutcome extends DomainError {
  readonly txHash: string;
  constructor(txHash: string, cause: unknown) {
    super(
      'service_unavailable',
      `transaction ${txHash} was sent but not confirmed yet; it will be reconciled`,
      {
        extra: { txHash },
        cause,
      },
    );
    this.txHash = txHash;
  }
}

function uncertain(hash: string, error: unknown): UncertainOutcome {
  return error instanceof UncertainOutcome ? error : new UncertainOutcome(hash, error);
}

/** Runs one RPC call; transport and JSON-RPC errors (plain objects in the SDK) become a clear 503. */
async function rpcCall<T>(method: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DomainError) throw error;
    const message = error instanceof Error ? error.message : JSON.stringify(error);
    throw new DomainError('service_unavailable', `ledger RPC ${method} failed: ${message}`, {
      cause: error,
    });
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0].slice(0, 300);
}

/** The result code's name (txBadSeq, txInsufficientFee, ...) of a refused transaction. */
function resultCodeOf(result: xdr.TransactionResult | undefined): string | undefined {
  if (result === undefined) return undefined;
  try {
    return String((result.result as unknown as { type?: string }).type ?? 'unknown error');
  } catch {
    return 'unknown error';
  }
}
