// The pool contract's present state, read through its read-only functions by simulation over Soroban RPC
// (no transaction is sent, no account is needed: the simulated source is the all-zero account, as read-only
// calls of the Stellar SDK's contract client use). What the rebuild checks (chain-check.ts) and recover's
// coverage check (event-coverage.ts) compare the events they read against.
import {
  Account,
  BASE_FEE,
  Contract,
  nativeToScVal,
  rpc,
  scValToNative,
  TransactionBuilder,
  type xdr,
} from '#stellar-sdk';

/** The source account of read-only simulations (the SDK's own NULL_ACCOUNT). */
const NULL_ACCOUNT = 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF';

export class PoolReads {
  readonly #server: rpc.Server;
  readonly #passphrase: string;
  readonly #pool: string;

  constructor(server: rpc.Server, passphrase: string, pool: string) {
    this.#server = server;
    this.#passphrase = passphrase;
    this.#pool = pool;
  }

  /** The pool tree's current root. */
  async root(): Promise<bigint> {
    return BigInt(scValToNative(await this.#read('get_root')) as bigint);
  }

  /** The current tree's next leaf index (how many commitments it holds). */
  async nextIndex(): Promise<number> {
    return Number(scValToNative(await this.#read('get_next_index')));
  }

  /** The tree commitments go to (those before it are full). */
  async currentTree(): Promise<number> {
    return Number(scValToNative(await this.#read('get_current_tree')));
  }

  /** How many leaves one tree takes. */
  async treeCapacity(): Promise<number> {
    return Number(scValToNative(await this.#read('get_tree_capacity')));
  }

  /** A full tree's final root (undefined for the current tree). */
  async fullTreeRoot(tree: number): Promise<bigint | undefined> {
    const root = scValToNative(await this.#read('get_full_tree_root', nativeToScVal(tree, { type: 'u32' })));
    return root === null || root === undefined ? undefined : BigInt(root as bigint);
  }

  /** The ASP roots the pool checks proofs against: the allowlist's and the blocklist's. */
  async aspRoots(): Promise<{ membership: bigint; nonMembership: bigint }> {
    const root = async (method: 'get_asp_membership_root' | 'get_asp_non_membership_root') =>
      BigInt(scValToNative(await this.#read(method)) as bigint);
    return {
      membership: await root('get_asp_membership_root'),
      nonMembership: await root('get_asp_non_membership_root'),
    };
  }

  /** Whether the pool has spent `nullifier`. */
  async isSpent(nullifier: bigint): Promise<boolean> {
    return scValToNative(await this.#read('is_spent', nativeToScVal(nullifier, { type: 'u256' }))) === true;
  }

  async #read(
    method:
      | 'get_root'
      | 'get_next_index'
      | 'get_current_tree'
      | 'get_tree_capacity'
      | 'get_full_tree_root'
      | 'is_spent'
      | 'get_asp_membership_root'
      | 'get_asp_non_membership_root',
    ...args: xdr.ScVal[]
  ): Promise<xdr.ScVal> {
    const tx = new TransactionBuilder(new Account(NULL_ACCOUNT, '0'), {
      fee: BASE_FEE,
      networkPassphrase: this.#passphrase,
    })
      .addOperation(new Contract(this.#pool).call(method, ...args))
      .setTimeout(30)
      .build();
    const simulation = await this.#server.simulateTransaction(tx);
    if (!rpc.Api.isSimulationSuccess(simulation) || simulation.result === undefined)
      throw new Error(
        `reading the pool's ${method} failed: ${rpc.Api.isSimulationError(simulation) ? simulation.error.split('\n')[0] : 'no result'}`,
      );
    return simulation.result.retval;
  }
}
