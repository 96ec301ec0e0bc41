// Paying an x402 service, in the steps a batch operator runs at different times: quote (one unpaid request,
// read the 402's PAYMENT-REQUIRED and pick our offer), sign (the payment payload and PAYMENT-SIGNATURE header,
// plus the record to persist before sending so a crash can be reconciled), and send (the paid retry, whose
// PAYMENT-RESPONSE carries the settlement). The wire format is @x402/core's x402HTTPClient; requests go
// through safeFetch. Confirming on chain is in confirm.ts.
//
// A payment never follows a redirect, neither the quote nor the paid request: the URL the caller's checks
// (the owner's service rules, the price rules) were made on is the URL that quotes, and the only URL the
// PAYMENT-SIGNATURE is ever sent to. A quote answered with a redirect is refused (`redirect_refused`: the
// caller may ask for the target itself, which is then checked like any URL); a redirect answering the paid
// request is returned as the answer, unfollowed. Following with a re-check on each hop would keep a window
// between the signature and the hop it lands on (the paid request's redirect comes after the signature was
// made for the first URL), and would pay a service the caller never named.

import type { Keypair } from '#stellar-sdk';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { x402Network } from '../ledger/networks.ts';
import { X402Error } from './errors.ts';
import { checkRequirements, ExactStellarClient, type SignedTransfer } from './exact-client.ts';
import type { TransferResources } from './transfer-resources.ts';
import {
  parseServiceUrl,
  safeFetch,
  type SafeFetchOptions,
  type SafeRequest,
  type SafeResponse,
} from './safe-fetch.ts';

export const PAYMENT_SIGNATURE_HEADER = 'PAYMENT-SIGNATURE';

/** Where payments are made: the ledger (its RPC and passphrase) and the token paid with. */
export interface PayerNetwork {
  rpcUrl: string;
  networkPassphrase: string;
  /** token contract id (C…) */
  asset: string;
  /** seconds per ledger for authorization expirations (measured on the RPC when omitted; at least 5) */
  ledgerSeconds?: number;
  /** simulations of identical transfers to reuse across payments (see transfer-resources.ts) */
  resources?: TransferResources;
}

export interface Quote {
  url: string;
  /** price in the token's smallest unit (stroops for USDC) */
  amount: bigint;
  asset: string;
  payTo: string;
  network: string;
  maxTimeoutSeconds: number;
  /** the accepts[] entry chosen */
  requirements: PaymentRequirements;
  /** the whole decoded PAYMENT-REQUIRED */
  paymentRequired: PaymentRequired;
}

/** What must be persisted before the paid request is sent (JSON-safe: integers as decimal strings). */
export interface PaymentRecord {
  url: string;
  network: string;
  asset: string;
  payer: string;
  payTo: string;
  amount: string;
  /** the authorization entry's nonce (i64 decimal) */
  nonce: string;
  /** the authorization is unusable after this ledger */
  expirationLedger: number;
  /** latest ledger when signed: the transfer, if any, lands after it */
  signedAtLedger: number;
}

export interface SignedPayment {
  paymentPayload: PaymentPayload;
  /** the PAYMENT-SIGNATURE header value (base64 JSON) */
  header: string;
  record: PaymentRecord;
}

export interface SendResult {
  status: number;
  url: string;
  contentType: string;
  body: Buffer;
  /** decoded PAYMENT-RESPONSE, when the service sent one */
  settlement?: SettleResponse;
}

function summarize(accepts: unknown): Record<string, unknown>[] {
  if (!Array.isArray(accepts)) return [];
  return accepts.slice(0, 10).map((a: Record<string, unknown>) => ({
    scheme: a?.scheme,
    network: a?.network,
    asset: a?.asset,
    amount: a?.amount,
  }));
}

function decodePaymentRequired(res: SafeResponse): PaymentRequired {
  let body: unknown;
  try {
    body = res.body.length ? JSON.parse(res.body.toString('utf8')) : undefined;
  } catch {
    body = undefined;
  }
  let pr: PaymentRequired;
  try {
    pr = new x402HTTPClient(new x402Client()).getPaymentRequiredResponse((n) => res.header(n), body);
  } catch (e) {
    throw new X402Error(
      'bad_payment_required',
      `the 402 answer is not a valid x402 payment request: ${(e as Error).message}`,
    );
  }
  if (pr?.x402Version !== 2 || !Array.isArray(pr.accepts))
    throw new X402Error(
      'bad_payment_required',
      `x402 version ${String(pr?.x402Version)} is not supported (v2 only)`,
    );
  return pr;
}

/** A redirect answering a payment's request: refused, naming where it pointed. */
function refuseRedirect(res: SafeResponse): void {
  const location = res.header('location');
  if (res.status < 300 || res.status >= 400 || location === undefined || res.status === 304) return;
  let target = location.slice(0, 200);
  try {
    target = new URL(location, res.url).toString().slice(0, 200);
  } catch {
    // keep the Location as sent
  }
  throw new X402Error(
    'redirect_refused',
    `the service answered ${res.status}, a redirect to ${target}: a payment goes only to the URL asked for; ask for that URL itself`,
    { status: res.status, location: target },
  );
}

/**
 * Fetches the service once without paying. A 402 with an `exact` offer on our network in our token → the
 * quote (the cheapest such offer). A redirect → X402Error `redirect_refused` (not followed). Anything
 * else → `not_x402` (details.response holds the answer, which may be free content), `bad_payment_required`, `no_matching_offer` (details.offered lists
 * what the service accepts) or `requirements_not_ours`; plus safeFetch's errors.
 */
export async function quote(
  request: SafeRequest,
  payer: PayerNetwork,
  fetchOpts: SafeFetchOptions = {},
): Promise<Quote> {
  const res = await safeFetch(request, { ...fetchOpts, followRedirects: false });
  refuseRedirect(res);
  if (res.status !== 402)
    throw new X402Error('not_x402', `the service answered ${res.status}, not 402 Payment Required`, {
      response: res,
    });
  const paymentRequired = decodePaymentRequired(res);
  const network = x402Network(payer.networkPassphrase);
  const ours = paymentRequired.accepts.filter(
    (a) => a?.scheme === 'exact' && a.network === network && a.asset === payer.asset,
  );
  if (ours.length === 0) {
    const offered = summarize(paymentRequired.accepts);
    const list = offered.map((o) => `${o.scheme}/${o.network}/${o.asset}`).join(', ') || 'nothing';
    throw new X402Error(
      'no_matching_offer',
      `the service accepts ${list}; we pay exact/${network}/${payer.asset}`,
      { offered },
    );
  }
  const valid = ours
    .map((r) => ({ r, amount: checkRequirements(r, network, [payer.asset]) }))
    .sort((a, b) => (a.amount < b.amount ? -1 : a.amount > b.amount ? 1 : 0));
  const best = valid[0] as { r: PaymentRequirements; amount: bigint };
  return {
    url: res.url,
    amount: best.amount,
    asset: best.r.asset,
    payTo: best.r.payTo,
    network,
    maxTimeoutSeconds: best.r.maxTimeoutSeconds,
    requirements: best.r,
    paymentRequired,
  };
}

/**
 * Signs the quoted payment with `signer` (the payer): the payment payload, its PAYMENT-SIGNATURE header
 * value and the record to persist before sending. `opts.nonce` fixes the authorization's nonce (random
 * otherwise); `opts.maxValiditySeconds` shortens its validity below the offer's `maxTimeoutSeconds`. Throws X402Error (`requirements_not_ours`,
 * `simulation_failed` — e.g. a balance too low —, `signing_failed`, `rpc_failed`).
 */
export async function sign(
  q: Quote,
  signer: Keypair,
  payer: PayerNetwork,
  opts: { nonce?: bigint; maxValiditySeconds?: number } = {},
): Promise<SignedPayment> {
  const scheme = new ExactStellarClient({
    nonce: opts.nonce,
    maxValiditySeconds: opts.maxValiditySeconds,
    signer,
    rpcUrl: payer.rpcUrl,
    networkPassphrase: payer.networkPassphrase,
    assets: [payer.asset],
    ledgerSeconds: payer.ledgerSeconds,
    resources: payer.resources,
  });
  let signed: SignedTransfer | undefined;
  const client = new x402Client((_v, accepts) => {
    const chosen = accepts.find((a) => JSON.stringify(a) === JSON.stringify(q.requirements));
    if (!chosen) throw new X402Error('requirements_not_ours', 'the quoted offer is no longer acceptable');
    return chosen;
  })
    .register(scheme.network as `${string}:${string}`, {
      scheme: 'exact',
      createPaymentPayload: async (x402Version, requirements) => {
        signed = await scheme.signTransfer(requirements);
        return { x402Version, payload: { transaction: signed.transaction } };
      },
    })
    .setSpendControls({
      allowedAssets: [{ network: scheme.network as `${string}:${string}`, asset: payer.asset }],
    });
  const http = new x402HTTPClient(client);
  let paymentPayload: PaymentPayload;
  try {
    paymentPayload = await http.createPaymentPayload({ ...q.paymentRequired, accepts: [q.requirements] });
  } catch (e) {
    if (e instanceof X402Error) throw e;
    throw new X402Error('signing_failed', `could not create the payment: ${(e as Error).message}`);
  }
  if (!signed) throw new X402Error('signing_failed', 'the payment was not signed');
  const header = http.encodePaymentSignatureHeader(paymentPayload)[PAYMENT_SIGNATURE_HEADER];
  if (!header) throw new X402Error('signing_failed', 'no PAYMENT-SIGNATURE header was produced');
  return {
    paymentPayload,
    header,
    record: {
      url: q.url,
      network: signed.network,
      asset: signed.asset,
      payer: signed.payer,
      payTo: signed.payTo,
      amount: signed.amount.toString(),
      nonce: signed.nonce,
      expirationLedger: signed.expirationLedger,
      signedAtLedger: signed.signedAtLedger,
    },
  };
}

function decodeSettlement(res: SafeResponse): SettleResponse | undefined {
  if (res.header('payment-response') === undefined && res.header('x-payment-response') === undefined)
    return undefined;
  try {
    return new x402HTTPClient(new x402Client()).getPaymentSettleResponse((n) => res.header(n));
  } catch (e) {
    throw new X402Error(
      'bad_payment_response',
      `PAYMENT-RESPONSE cannot be decoded: ${(e as Error).message}`,
    );
  }
}

/**
 * Sends the paid request (the quoted request again, with PAYMENT-SIGNATURE, to the very URL quoted: another
 * URL is refused with `bad_url` before anything is sent) and returns the service's answer and its settlement;
 * a redirect is that answer, never followed. A 402 again → X402Error `payment_rejected` (details.reason is the service's
 * error, details.settlement a failed settlement if one was sent). Other statuses are returned as they are:
 * the caller decides what a 5xx after a settlement means.
 */
export async function send(
  request: SafeRequest,
  signed: SignedPayment,
  fetchOpts: SafeFetchOptions = {},
): Promise<SendResult> {
  const target = parseServiceUrl(request.url).toString();
  if (target !== signed.record.url)
    throw new X402Error(
      'bad_url',
      `the payment was signed for ${signed.record.url.slice(0, 200)}, not ${target.slice(0, 200)}: it is not sent`,
    );
  const res = await safeFetch(request, {
    ...fetchOpts,
    followRedirects: false,
    systemHeaders: { ...fetchOpts.systemHeaders, [PAYMENT_SIGNATURE_HEADER.toLowerCase()]: signed.header },
  });
  const settlement = decodeSettlement(res);
  if (res.status === 402) {
    let reason = 'payment refused';
    try {
      reason = decodePaymentRequired(res).error ?? reason;
    } catch {
      // keep the generic reason
    }
    if (settlement?.errorReason) reason = settlement.errorReason;
    throw new X402Error('payment_rejected', `the service refused the payment: ${reason}`, {
      reason,
      ...(settlement && { settlement }),
    });
  }
  return { status: res.status, url: res.url, contentType: res.contentType, body: res.body, settlement };
}
