// Our facilitator for `exact` on Stellar, for any network we have an RPC for (stellar:local on the sandbox,
// stellar:testnet, stellar:pubnet). verify makes the checks the official @x402/stellar facilitator makes, with
// the same reason codes: one invokeHostFunction `transfer` on the asset, to = payTo, the exact amount, no
// channel account as source, payer or signer; a simulation with exactly one transfer event and no other
// contract event; a fee between the simulation's minimum and our maximum; v1 address credentials only,
// signed, expiring no later than maxTimeoutSeconds from now, without sub-invocations. settle re-verifies,
// rebuilds the transaction from a free channel account, submits it and waits until it is final.
// The re-verification in settle reuses the simulation of a verify of the same payload made in the current or
// the previous ledger (a resource server verifies, runs its handler, then settles: simulating twice within a
// ledger doubled the cost of every payment); the authorization checks run again against the latest ledger.
// Channel accounts' sequence numbers are tracked here after the first load (reloaded after any submission
// whose fate is unknown), and finality is watched for all settlements at once (finality.ts).

import { createHash } from 'node:crypto';
import {
  type Account,
  Address,
  humanizeEvents,
  Operation,
  rpc,
  scValToNative,
  Transaction,
  TransactionBuilder,
  xdr,
  type Keypair,
} from '#stellar-sdk';
import type {
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkFacilitator,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import { x402Network } from '../../ledger/networks.ts';
import { signTransaction } from '../../ledger/ed25519.ts';
import { rpcServer } from '../../ledger/rpc-server.ts';
import { expirationLedger, latestLedgerOf, ledgerSecondsOf } from '../rpc.ts';
import { ChannelPool } from './channels.ts';
import { FinalityWatcher } from './finality.ts';

// The official facilitator's default cap (a G account's token transfer costs about 23,000 stroops on
// testnet's fee schedule, which the sandbox uses).
export const DEFAULT_MAX_FEE_STROOPS = 50_000;
const DEFAULT_TIMEOUT_SECONDS = 60;
/** Ledgers of slack on the expiration bound (the client and we read the latest ledger at different times). */
const EXPIRATION_TOLERANCE = 2;
/** Verified payloads remembered for settle's re-verification (oldest forgotten first). */
const VERIFIED_MAX = 10_000;

export interface FacilitatorSchemeOptions {
  rpcUrl: string;
  networkPassphrase: string;
  /** the channel accounts that submit settlements (they pay the fees) */
  channels: Keypair[];
  maxFeeStroops?: number;
  /** seconds per ledger for the expiration bound (measured on the RPC when omitted) */
  ledgerSeconds?: number;
  /** poll interval while waiting for a settlement to be final (default 250 ms) */
  pollMs?: number;
}

interface Parsed {
  tx: Transaction;
  op: Operation.InvokeHostFunction;
  payer: string;
  amount: bigint;
}

const invalid = (invalidReason: string, payer?: string): VerifyResponse => ({
  isValid: false,
  invalidReason,
  ...(payer && { payer }),
});

export class ExactStellarFacilitatorScheme implements SchemeNetworkFacilitator {
  readonly scheme = 'exact';
  readonly caipFamily = 'stellar:*';
  readonly network: string;
  readonly pool: ChannelPool;
  readonly #server: rpc.Server;
  readonly #maxFee: number;
  /** payer:nonce of settlements in flight, so one authorization is never submitted twice at once */
  readonly #inFlight = new Set<string>();
  /** payload+requirements digest → what verify found, and the latest ledger when its simulation passed */
  readonly #verified = new Map<string, { parsed: Parsed; ledger: number }>();
  /** channel accounts with their next sequence numbers, once loaded */
  readonly #accounts = new Map<string, Account>();
  readonly #finality: FinalityWatcher;

  readonly #opts: FacilitatorSchemeOptions;

  constructor(opts: FacilitatorSchemeOptions) {
    this.#opts = opts;
    this.network = x402Network(opts.networkPassphrase);
    this.pool = new ChannelPool(opts.channels);
    this.#server = rpcServer(opts.rpcUrl);
    this.#maxFee = opts.maxFeeStroops ?? DEFAULT_MAX_FEE_STROOPS;
    this.#finality = new FinalityWatcher(this.#server, opts.pollMs ?? 250);
  }

  /** Stops waiting for settlements (they answer as not final). */
  close(): void {
    this.#finality.close();
  }

  getExtra(): Record<string, unknown> {
    return { areFeesSponsored: true };
  }

  getSigners(): string[] {
    return [...this.pool.addresses];
  }

  /** The static checks: everything but the simulation and the ledger. */
  #parse(payload: PaymentPayload, req: PaymentRequirements): Parsed | VerifyResponse {
    if (payload.x402Version !== 2) return invalid('invalid_x402_version');
    if (payload.accepted?.scheme !== 'exact' || req.scheme !== 'exact') return invalid('unsupported_scheme');
    if (req.network !== payload.accepted.network) return invalid('network_mismatch');
    if (req.network !== this.network) return invalid('invalid_network');
    const txXdr = (payload.payload as { transaction?: unknown } | undefined)?.transaction;
    if (typeof txXdr !== 'string') return invalid('invalid_exact_stellar_payload_malformed');
    let tx: Transaction;
    try {
      const built = TransactionBuilder.fromXDR(txXdr, this.#opts.networkPassphrase);
      if (!(built instanceof Transaction)) return invalid('invalid_exact_stellar_payload_malformed');
      tx = built;
    } catch {
      return invalid('invalid_exact_stellar_payload_malformed');
    }
    if (tx.operations.length !== 1 || tx.operations[0]?.type !== 'invokeHostFunction')
      return invalid('invalid_exact_stellar_payload_wrong_operation');
    const op = tx.operations[0] as Operation.InvokeHostFunction;
    const ours = this.pool.addressSet;
    if (ours.has(op.source ?? '') || ours.has(tx.source))
      return invalid('invalid_exact_stellar_payload_unsafe_tx_or_op_source');
    if (op.func.type !== 'hostFunctionTypeInvokeContract')
      return invalid('invalid_exact_stellar_payload_wrong_operation');
    const call = op.func.value as xdr.InvokeContractArgs;
    if (Address.fromScAddress(call.contractAddress).toString() !== req.asset)
      return invalid('invalid_exact_stellar_payload_wrong_asset');
    if (call.functionName.toString() !== 'transfer' || call.args.length !== 3)
      return invalid('invalid_exact_stellar_payload_wrong_function_name');
    let payer: unknown;
    let to: unknown;
    let amount: unknown;
    try {
      [payer, to, amount] = call.args.map((a) => scValToNative(a));
    } catch {
      return invalid('invalid_exact_stellar_payload_malformed');
    }
    if (typeof payer !== 'string' || typeof amount !== 'bigint')
      return invalid('invalid_exact_stellar_payload_malformed');
    if (ours.has(payer)) return invalid('invalid_exact_stellar_payload_facilitator_is_payer');
    if (to !== req.payTo) return invalid('invalid_exact_stellar_payload_wrong_recipient', payer);
    if (!/^\d{1,39}$/.test(String(req.amount)) || amount !== BigInt(req.amount))
      return invalid('invalid_exact_stellar_payload_wrong_amount', payer);
    return { tx, op, payer, amount };
  }

  #checkEvents(sim: rpc.Api.SimulateTransactionSuccessResponse, p: Parsed, req: PaymentRequirements) {
    const transfers: { from: unknown; to: unknown; amount: unknown }[] = [];
    for (const ev of humanizeEvents(sim.events)) {
      if (ev.type !== 'contract') continue;
      if (ev.topics.length < 3 || ev.topics[0] !== 'transfer')
        return invalid('invalid_exact_stellar_payload_event_not_transfer', p.payer);
      if (!ev.contractId) return invalid('invalid_exact_stellar_payload_event_missing_contract_id', p.payer);
      if (ev.contractId !== req.asset)
        return invalid('invalid_exact_stellar_payload_event_wrong_asset', p.payer);
      transfers.push({ from: ev.topics[1], to: ev.topics[2], amount: ev.data });
    }
    if (transfers.length === 0) return invalid('invalid_exact_stellar_payload_no_transfer_events', p.payer);
    if (transfers.length > 1) return invalid('invalid_exact_stellar_payload_multiple_transfers', p.payer);
    const t = transfers[0]!;
    if (t.from !== p.payer) return invalid('invalid_exact_stellar_payload_event_wrong_from', p.payer);
    if (t.to !== req.payTo) return invalid('invalid_exact_stellar_payload_event_wrong_to', p.payer);
    if (t.amount !== p.amount) return invalid('invalid_exact_stellar_payload_event_wrong_amount', p.payer);
    return undefined;
  }

  #checkAuth(p: Parsed, maxLedger: number) {
    const ours = this.pool.addressSet;
    if (p.op.auth === undefined || p.op.auth.length === 0)
      return invalid('invalid_exact_stellar_payload_no_auth_entries', p.payer);
    let payerSigned = false;
    for (const entry of p.op.auth) {
      if (entry.credentials.type !== 'sorobanCredentialsAddress')
        return invalid('invalid_exact_stellar_payload_unsupported_credential_type', p.payer);
      const ac = entry.credentials.value as xdr.SorobanAddressCredentials;
      const who = Address.fromScAddress(ac.address).toString();
      if (ours.has(who)) return invalid('invalid_exact_stellar_payload_facilitator_in_auth', p.payer);
      if (ac.signatureExpirationLedger > maxLedger + EXPIRATION_TOLERANCE)
        return invalid('invalid_exact_stellar_signature_expiration_too_far', p.payer);
      if (entry.rootInvocation.subInvocations.length > 0)
        return invalid('invalid_exact_stellar_payload_has_subinvocations', p.payer);
      if (ac.signature.type === 'scvVoid')
        return invalid('invalid_exact_stellar_payload_unexpected_pending_signatures', p.payer);
      if (who === p.payer) payerSigned = true;
    }
    if (!payerSigned) return invalid('invalid_exact_stellar_payload_missing_payer_signature', p.payer);
    return undefined;
  }

  async verify(payload: PaymentPayload, req: PaymentRequirements): Promise<VerifyResponse> {
    return (await this.#check(payload, req, false)).result;
  }

  /**
   * verify, and the parsed payload when valid. With `reuse` (settle), what a verify of the same payload
   * found in this or the previous ledger is not parsed and simulated again (the auth checks still run).
   */
  async #check(
    payload: PaymentPayload,
    req: PaymentRequirements,
    reuse: boolean,
  ): Promise<{ result: VerifyResponse; parsed?: Parsed }> {
    const key = digest(payload, req);
    const seen = this.#verified.get(key);
    if (reuse) this.#verified.delete(key);
    const parsed = seen?.parsed ?? this.#parse(payload, req);
    if (!('tx' in parsed)) return { result: parsed };
    try {
      const [latest, ledgerSeconds] = await Promise.all([
        latestLedgerOf(this.#opts.rpcUrl, this.#server),
        this.#opts.ledgerSeconds ?? ledgerSecondsOf(this.#opts.rpcUrl, this.#server).then((r) => r.low),
      ]);
      if (!reuse || seen === undefined || seen.ledger < latest - 1) {
        const simWrong = await this.#simulateAndCheck(parsed, req);
        if (simWrong) return { result: simWrong };
      }
      const maxLedger = expirationLedger(
        latest,
        req.maxTimeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
        ledgerSeconds,
      );
      const authWrong = this.#checkAuth(parsed, maxLedger);
      if (authWrong) return { result: authWrong };
      if (!reuse) {
        if (this.#verified.size >= VERIFIED_MAX)
          this.#verified.delete(this.#verified.keys().next().value as string);
        this.#verified.set(key, { parsed, ledger: latest });
      }
      return { result: { isValid: true, payer: parsed.payer }, parsed };
    } catch {
      return { result: invalid('unexpected_verify_error', parsed.payer) };
    }
  }

  /** The simulation's verdict: it succeeds, the fee covers it within our cap, one transfer event as asked. */
  async #simulateAndCheck(parsed: Parsed, req: PaymentRequirements): Promise<VerifyResponse | undefined> {
    const sim = await this.#server.simulateTransaction(parsed.tx);
    if (!rpc.Api.isSimulationSuccess(sim))
      return invalid('invalid_exact_stellar_payload_simulation_failed', parsed.payer);
    const fee = Number(parsed.tx.fee);
    if (fee < Number(sim.minResourceFee))
      return invalid('invalid_exact_stellar_payload_fee_below_minimum', parsed.payer);
    if (fee > this.#maxFee) return invalid('invalid_exact_stellar_payload_fee_exceeds_maximum', parsed.payer);
    return this.#checkEvents(sim, parsed, req);
  }

  async settle(payload: PaymentPayload, req: PaymentRequirements): Promise<SettleResponse> {
    const fail = (errorReason: string, payer?: string, transaction = ''): SettleResponse => ({
      success: false,
      errorReason,
      transaction,
      network: req.network,
      ...(payer && { payer }),
    });
    const { result: verified, parsed } = await this.#check(payload, req, true);
    if (!verified.isValid || !parsed)
      return fail(verified.invalidReason ?? 'verification_failed', verified.payer);
    const ac = parsed.op.auth![0]!.credentials.value as xdr.SorobanAddressCredentials;
    const key = `${parsed.payer}:${String(ac.nonce)}`;
    if (this.#inFlight.has(key)) return fail('settle_exact_stellar_duplicate_settlement', parsed.payer);
    this.#inFlight.add(key);
    try {
      return await this.pool.with(async (channel) => {
        // the wait for a channel may have outlived the authorization: refuse it rather than burn a fee
        const expiration = ac.signatureExpirationLedger;
        if ((await latestLedgerOf(this.#opts.rpcUrl, this.#server)) >= expiration)
          return fail('invalid_exact_stellar_payload_authorization_expired', parsed.payer);
        const env = xdr.TransactionEnvelope.fromXdr(String(payload.payload.transaction), 'base64');
        const ext = (env.value as xdr.TransactionV1Envelope).tx.ext;
        if (ext.type !== 'sorobanData') return fail('invalid_exact_stellar_payload_malformed', parsed.payer);
        const address = channel.publicKey();
        const account = this.#accounts.get(address) ?? (await this.#server.getAccount(address));
        const tx = new TransactionBuilder(account, {
          fee: String(Math.min(Number(parsed.tx.fee), this.#maxFee)),
          networkPassphrase: this.#opts.networkPassphrase,
          sorobanData: ext.value as xdr.SorobanTransactionData,
        })
          .setTimeout(req.maxTimeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS)
          .addOperation(Operation.invokeHostFunction({ func: parsed.op.func, auth: parsed.op.auth ?? [] }))
          .build();
        signTransaction(tx, channel);
        // until the transaction is final, the channel's sequence number is not known for sure
        this.#accounts.delete(address);
        const sent = await this.#server.sendTransaction(tx);
        if (sent.status !== 'PENDING')
          return fail('settle_exact_stellar_transaction_submission_failed', parsed.payer);
        const timeoutMs = (req.maxTimeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
        const final = await this.#finality.wait(sent.hash, sent.latestLedger, timeoutMs);
        // applied, successfully or not: the sequence number was consumed, the next one is ours to use
        if (final !== rpc.Api.GetTransactionStatus.NOT_FOUND) this.#accounts.set(address, account);
        if (final !== rpc.Api.GetTransactionStatus.SUCCESS)
          return fail('settle_exact_stellar_transaction_failed', parsed.payer, sent.hash);
        return { success: true, transaction: sent.hash, network: req.network, payer: parsed.payer };
      });
    } catch (error) {
      // The cause travels with the answer (x402's errorMessage), so whoever reads the refusal can log it.
      return { ...fail('unexpected_settle_error', parsed.payer), errorMessage: String(error) };
    } finally {
      this.#inFlight.delete(key);
    }
  }
}

/** What a verification vouches for: the payload and the requirements it was checked against. */
function digest(payload: PaymentPayload, req: PaymentRequirements): string {
  return createHash('sha256')
    .update(JSON.stringify(payload))
    .update('\0')
    .update(JSON.stringify(req))
    .digest('base64');
}
