// Our x402 `exact` scheme client for Stellar (`stellar:*`), on the project's @stellar/stellar-sdk: it builds
// `transfer(payer, payTo, amount)` on the asset contract with the payer's authorization entry signed until
// latest + ceil(maxTimeoutSeconds / max(ledger seconds, 5)) (v1 address credentials: the official @x402/stellar
// 2.9.0 facilitator cannot read CAP-71 v2 credentials), simulates it once with that entry (enforcing: the
// entry must be exactly what the call needs) unless an identical transfer's simulation can be reused, and
// returns the assembled transaction as the payload. It implements @x402/core's
// SchemeNetworkClient so it plugs into x402Client. Unlike the official client it talks to http:// RPCs; the
// ledger time it signs with is the slower of the RPC's measured pace and the nominal 5 s, so that every
// conforming facilitator accepts the expiration.

import {
  Account,
  Address,
  Keypair,
  nativeToScVal,
  Operation,
  rpc,
  StrKey,
  TransactionBuilder,
  xdr,
} from '#stellar-sdk';
import type { PaymentPayloadResult, PaymentRequirements, SchemeNetworkClient } from '@x402/core/types';
import { x402Network } from '../ledger/networks.ts';
import { type SignedAuthEntry, signInvocation } from './auth-entry.ts';
import { X402Error } from './errors.ts';
import { TransferResources } from './transfer-resources.ts';
import { rpcServer } from '../ledger/rpc-server.ts';
import { expirationLedger, latestLedgerOf, ledgerSecondsOf, payerLedgerSeconds } from './rpc.ts';

/** Source account of the unsigned transaction: the facilitator rebuilds it with its own account. */
const NULL_ACCOUNT = 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF';

/** Inclusion fee offered; the facilitator rebuilds the transaction with its own. */
const BASE_FEE = 100n;

/** Largest amount a SEP-41 token accepts (i128 max). */
const MAX_I128 = (1n << 127n) - 1n;

export interface ExactClientOptions {
  /** the payer; signs the authorization entry */
  signer: Keypair;
  rpcUrl: string;
  networkPassphrase: string;
  /** token contract ids this client pays with (C…); anything else is refused */
  assets: string[];
  /**
   * seconds per ledger for the expiration (measured on the RPC when omitted); never less than the nominal
   * 5 s: the official @x402/stellar facilitator assumes Horizon's estimate (5 s when Horizon cannot be
   * reached) and refuses an expiration further away than that
   */
  ledgerSeconds?: number;
  /** simulations of earlier identical transfers to reuse (see transfer-resources.ts); none when omitted */
  resources?: TransferResources;
  /**
   * the authorization's nonce (i64); random when omitted. A payer that derives it (one nonce per payment
   * attempt) can find the payment on chain again, and the chain accepts each nonce once.
   */
  nonce?: bigint;
  /**
   * how long the authorization stays valid, in seconds, when that is shorter than the offer's
   * `maxTimeoutSeconds` (a facilitator accepts any expiration up to its bound): a payment that fails is
   * proven unpaid sooner
   */
  maxValiditySeconds?: number;
}

/** What one signed authorization commits the payer to, for the caller's records. */
export interface SignedTransfer {
  /** base64 TransactionEnvelope: the payload's `transaction` */
  transaction: string;
  payer: string;
  payTo: string;
  asset: string;
  amount: bigint;
  network: string;
  /** the authorization's nonce (i64, as a decimal string) */
  nonce: string;
  /** last ledger the authorization can be used in */
  expirationLedger: number;
  /** latest ledger when it was signed */
  signedAtLedger: number;
}

/** Checks that `req` is an `exact` payment on our network in one of our assets; returns the amount. */
export function checkRequirements(
  req: PaymentRequirements,
  network: string,
  assets: readonly string[],
): bigint {
  const refuse = (why: string) =>
    new X402Error('requirements_not_ours', `payment requirements refused: ${why}`, { requirements: req });
  if (req.scheme !== 'exact') throw refuse(`scheme ${String(req.scheme)} is not exact`);
  if (req.network !== network) throw refuse(`network ${String(req.network)} is not ${network}`);
  if (typeof req.asset !== 'string' || !assets.includes(req.asset))
    throw refuse(`asset ${String(req.asset)} is not ${assets.join(' or ')}`);
  if (
    typeof req.payTo !== 'string' ||
    !(StrKey.isValidEd25519PublicKey(req.payTo) || StrKey.isValidContract(req.payTo))
  )
    throw refuse(`payTo ${String(req.payTo)} is not a Stellar account or contract address`);
  if (typeof req.amount !== 'string' || !/^[1-9]\d{0,38}$/.test(req.amount) || BigInt(req.amount) > MAX_I128)
    throw refuse(`amount ${String(req.amount)} is not a positive integer of stroops`);
  if (!Number.isInteger(req.maxTimeoutSeconds) || req.maxTimeoutSeconds < 1 || req.maxTimeoutSeconds > 3600)
    throw refuse(`maxTimeoutSeconds ${String(req.maxTimeoutSeconds)} is not 1..3600`);
  if (req.extra?.areFeesSponsored !== true) throw refuse('fees are not sponsored (extra.areFeesSponsored)');
  return BigInt(req.amount);
}

function simulationError(sim: rpc.Api.SimulateTransactionResponse, step: string): X402Error | undefined {
  if (rpc.Api.isSimulationError(sim))
    return new X402Error('simulation_failed', `${step} simulation failed: ${sim.error}`);
  if (rpc.Api.isSimulationRestore(sim))
    return new X402Error('simulation_failed', `${step} simulation needs a ledger entry restored first`);
  return undefined;
}

export class ExactStellarClient implements SchemeNetworkClient {
  readonly scheme = 'exact';
  readonly network: string;
  readonly #server: rpc.Server;

  readonly #opts: ExactClientOptions;

  constructor(opts: ExactClientOptions) {
    this.#opts = opts;
    if (opts.ledgerSeconds !== undefined && !(opts.ledgerSeconds > 0))
      throw new RangeError('ledgerSeconds must be positive');
    this.network = x402Network(opts.networkPassphrase);
    this.#server = rpcServer(opts.rpcUrl);
  }

  get payer(): string {
    return this.#opts.signer.publicKey();
  }

  /** @x402/core's entry point: the payload for `requirements` (see signTransfer for the details kept). */
  async createPaymentPayload(
    x402Version: number,
    requirements: PaymentRequirements,
  ): Promise<PaymentPayloadResult> {
    const signed = await this.signTransfer(requirements);
    return { x402Version, payload: { transaction: signed.transaction } };
  }

  /** Builds, simulates and signs the transfer `requirements` ask for. */
  async signTransfer(requirements: PaymentRequirements): Promise<SignedTransfer> {
    const { passphrase, signer } = { passphrase: this.#opts.networkPassphrase, signer: this.#opts.signer };
    const amount = checkRequirements(requirements, this.network, this.#opts.assets);
    const payer = signer.publicKey();
    const { asset, payTo, maxTimeoutSeconds } = requirements;
    if (payTo === payer) throw new X402Error('requirements_not_ours', 'the payer cannot pay itself');

    let latest: number;
    let ledgerSeconds: number;
    try {
      [latest, ledgerSeconds] = await Promise.all([
        latestLedgerOf(this.#opts.rpcUrl, this.#server),
        this.#opts.ledgerSeconds ?? ledgerSecondsOf(this.#opts.rpcUrl, this.#server).then((r) => r.high),
      ]);
    } catch (e) {
      if (e instanceof X402Error) throw e;
      throw new X402Error('rpc_failed', `getLatestLedger failed: ${(e as Error).message}`);
    }
    const validity = Math.min(maxTimeoutSeconds, this.#opts.maxValiditySeconds ?? maxTimeoutSeconds);
    const expiration = expirationLedger(latest, validity, payerLedgerSeconds(ledgerSeconds));

    const invocation = new xdr.InvokeContractArgs({
      contractAddress: new Address(asset).toScAddress(),
      functionName: 'transfer',
      args: [
        new Address(payer).toScVal(),
        new Address(payTo).toScVal(),
        nativeToScVal(amount, { type: 'i128' }),
      ],
    });
    // 1. the payer's entry, built and signed here (the transfer needs exactly this one: checked next)
    let signed: SignedAuthEntry;
    try {
      signed = signInvocation(signer, invocation, expiration, passphrase, this.#opts.nonce);
    } catch (e) {
      throw new X402Error('signing_failed', `could not sign the authorization: ${(e as Error).message}`);
    }
    // 2. one enforcing simulation with the signed entry (resources, footprint, the entry accepted), or an
    // identical transfer's simulation fitted to this nonce
    // (with sorobanData, the builder adds its resource fee to the inclusion fee)
    const build = (sorobanData?: xdr.SorobanTransactionData) =>
      new TransactionBuilder(new Account(NULL_ACCOUNT, '0'), {
        fee: BASE_FEE.toString(),
        networkPassphrase: passphrase,
        ...(sorobanData && { sorobanData }),
      })
        .addOperation(
          Operation.invokeHostFunction({
            func: xdr.HostFunction.hostFunctionTypeInvokeContract(invocation),
            auth: [signed.entry],
          }),
        )
        .setTimeout(maxTimeoutSeconds)
        .build();
    const cacheKey = TransferResources.key(asset, payer, payTo, amount);
    const simulate = () => this.#simulate(build(), 'enforcing');
    const sim = this.#opts.resources
      ? await this.#opts.resources.fitted(cacheKey, payer, signed.nonce, simulate)
      : await simulate();
    // as rpc.assembleTransaction does: the simulated resources, fee = base fee + their resource fee
    const assembled = build(sim.transactionData.build());
    return {
      transaction: assembled.toXDR(),
      payer,
      payTo,
      asset,
      amount,
      network: this.network,
      nonce: signed.nonce.toString(),
      expirationLedger: expiration,
      signedAtLedger: latest,
    };
  }

  async #simulate(
    tx: ReturnType<TransactionBuilder['build']>,
    step: string,
  ): Promise<rpc.Api.SimulateTransactionSuccessResponse> {
    let sim: rpc.Api.SimulateTransactionResponse;
    try {
      sim = await this.#server.simulateTransaction(tx);
    } catch (e) {
      throw new X402Error('rpc_failed', `simulateTransaction failed: ${(e as Error).message}`);
    }
    const err = simulationError(sim, step);
    if (err) throw err;
    return sim as rpc.Api.SimulateTransactionSuccessResponse;
  }
}
