// What a network run by the sandbox engine is made of, given by its caller: the genesis that creates its
// classic accounts in ledger 1 (returning the secrets kept in the data directory), the deployment of its
// contracts through the sandbox's own Soroban RPC (as on any network; returning the public info served at
// /sandbox/info), and optional friendbot extras (e.g. minting a test token). The engine itself knows no
// particular contract.
import type { Keypair, xdr } from '#stellar-sdk';
import type { LedgerAccess } from '../ledger/ledger-access.ts';
import type { JobTransaction } from './chain.ts';
import type { Overlay } from './overlay.ts';

export interface GenesisContext {
  readonly passphrase: string;
  /** the genesis ledger's sequence */
  readonly sequence: number;
  /** Creates a classic account holding `balance` stroops of XLM. */
  createAccount(publicKey: string, balance: bigint): void;
  /** Creates an authorized trustline of `account` for the classic asset `code:issuer` (maximum limit). */
  createTrustline(account: string, code: string, issuer: string): void;
}

export interface DeployContext {
  readonly passphrase: string;
  /** the sandbox's own Soroban RPC; ledgers close as soon as a transaction waits during the deployment */
  readonly ledger: LedgerAccess;
}

export interface FriendbotContext<Info, Secrets> {
  readonly passphrase: string;
  readonly ledgerSequence: number;
  readonly overlay: Overlay;
  readonly info: Info;
  readonly secrets: Secrets;
  /** Creates an authorized trustline (maximum limit) unless the account has one; true if it was created. */
  createTrustline(account: string, code: string, issuer: string): boolean;
  /**
   * A contract call sent by `signer` (its source account, which authorises it), simulated and applied on the
   * real host like any transaction, in the ledger being closed.
   */
  invoke(signer: Keypair, contractId: string, fn: string, args: xdr.ScVal[]): Promise<JobTransaction>;
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
  /** The classic accounts of ledger 1; returns the secrets kept in the data directory. */
  genesis(ctx: GenesisContext): Secrets;
  /** Deploys the network's contracts through its own RPC; returns the public info. Safe to run again. */
  deploy(ctx: DeployContext, secrets: Secrets): Promise<Info>;
  // the request type is private to the extension
  friendbot?: FriendbotExtension<Info, Secrets, any>;
}

/** The info the engine serves: the network's own, plus the passphrase and its x402 network id. */
export type NetworkInfo<Info> = Info & { networkPassphrase: string; network: string };
