// What a network run by the sandbox engine is made of, given by its caller: the contracts the host can run,
// the genesis that creates its accounts and deploys its contracts (returning the public info served at
// /sandbox/info and the secrets kept in the data directory), and optional friendbot extras (e.g. minting a
// test token). The engine itself knows no particular contract.
import type { Keypair, xdr } from '@stellar/stellar-sdk';
import type { ContractDefinition } from './contract-api.ts';
import type { Host } from './host.ts';
import type { JobTransaction } from './chain.ts';
import type { Overlay } from './overlay.ts';

export interface GenesisContext {
  readonly passphrase: string;
  readonly networkId: Uint8Array;
  /** the genesis ledger's sequence */
  readonly sequence: number;
  /** Creates a classic account holding `balance` stroops of XLM. */
  createAccount(publicKey: string, balance: bigint): void;
  /**
   * Deploys `def` (registered in the network's contracts) as `deployer` with `salt`, as stellar-core
   * derives the id, stores its wasm as the code entry, runs its constructor; returns the C… id.
   */
  deployContract(deployer: string, salt: string, def: ContractDefinition, args: xdr.ScVal[]): Promise<string>;
  /** Creates an authorized trustline of `account` for the classic asset `code:issuer` (maximum limit). */
  createTrustline(account: string, code: string, issuer: string): void;
  /** Deploys the Stellar Asset Contract of the classic asset `code:issuer`; returns its C… id. */
  deployStellarAsset(code: string, issuer: string): Promise<string>;
  /** Invokes a contract with `source` as the source account (its authorization is granted). */
  invoke(source: string, contractId: string, fn: string, args: xdr.ScVal[]): Promise<xdr.ScVal>;
}

export interface FriendbotContext<Info, Secrets> {
  readonly passphrase: string;
  readonly ledgerSequence: number;
  readonly host: Host;
  readonly overlay: Overlay;
  readonly info: Info;
  readonly secrets: Secrets;
  /** Creates an authorized trustline (maximum limit) unless the account has one; true if it was created. */
  createTrustline(account: string, code: string, issuer: string): boolean;
  /** A contract call signed by `signer` as a recorded transaction, applied to the overlay. */
  signedCall(
    signer: Keypair,
    contractId: string,
    fn: string,
    args: xdr.ScVal[],
    footprint: { readOnly: xdr.LedgerKey[]; readWrite: xdr.LedgerKey[] },
  ): Promise<JobTransaction>;
}

/** Friendbot extras beyond creating the account (`GET /friendbot?addr=G…&…`). */
export interface FriendbotExtension<Info, Secrets, Request = unknown> {
  /** The extra request from the query: `undefined` if none; a string is a 400 with that detail. */
  parse(q: URLSearchParams): { request: Request | undefined } | string;
  /**
   * Runs for every account friendbot funds (`request` undefined when only the account was asked for),
   * once it exists; its transactions are recorded after the account's creation, its fields join the reply.
   */
  apply(
    ctx: FriendbotContext<Info, Secrets>,
    address: string,
    request: Request | undefined,
  ): Promise<{ txs: JobTransaction[]; reply: Record<string, unknown> }>;
  /** Hint added to the "account already exists" refusal (how to ask for the extras instead). */
  existsHint?: string;
}

export interface NetworkDefinition<Info extends object = object, Secrets extends object = object> {
  /** the network's contracts (the Stellar Asset Contract is built in) */
  contracts: readonly ContractDefinition[];
  genesis(ctx: GenesisContext): Promise<{ info: Info; secrets: Secrets }>;
  // the request type is private to the extension
  friendbot?: FriendbotExtension<Info, Secrets, any>;
}

/** The info the engine serves: the network's own, plus the passphrase and its x402 network id. */
export type NetworkInfo<Info> = Info & { networkPassphrase: string; network: string };
