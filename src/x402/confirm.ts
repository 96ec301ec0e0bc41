// Seeing payments on the ledger through our own RPC. confirmTransfer: a settled payment counts only when its
// transaction SUCCEEDED and carries exactly one token `transfer` event from the payer, to payTo, of exactly
// the amount. findAuthorizationUse: for a payment signed but never answered (a crash, a lost connection),
// whether its authorization was used on chain (the transfer events payer → payTo since the signing ledger,
// each candidate's transaction checked for the authorization's nonce) or can no longer be (expired).

import { Address, humanizeEvents, nativeToScVal, rpc, scValToNative, xdr } from '#stellar-sdk';
import { X402Error } from './errors.ts';
import { rpcServer } from '../ledger/rpc-server.ts';

export interface ExpectedTransfer {
  payer: string;
  payTo: string;
  /** token contract id */
  asset: string;
  /** smallest units */
  amount: bigint | string;
}

export interface ConfirmedTransfer {
  txHash: string;
  ledger: number;
  /** ledger close time, unix seconds */
  createdAt: number;
}

type RpcLike = rpc.Server | string;
const serverOf = (s: RpcLike) => (typeof s === 'string' ? rpcServer(s) : s);

interface TransferEvent {
  from: string;
  to: string;
  amount: bigint;
}

/** SEP-41 transfer data is the amount, or a map with `amount` (muxed destinations). */
function amountOf(data: unknown): bigint | undefined {
  if (typeof data === 'bigint') return data;
  if (data && typeof data === 'object' && typeof (data as { amount?: unknown }).amount === 'bigint')
    return (data as { amount: bigint }).amount;
  return undefined;
}

function transfersIn(events: xdr.ContractEvent[], asset: string): TransferEvent[] {
  const out: TransferEvent[] = [];
  for (const ev of humanizeEvents(events)) {
    if (ev.type !== 'contract' || ev.contractId !== asset || ev.topics[0] !== 'transfer') continue;
    const amount = amountOf(ev.data);
    if (typeof ev.topics[1] !== 'string' || typeof ev.topics[2] !== 'string' || amount === undefined)
      continue;
    out.push({ from: ev.topics[1], to: ev.topics[2], amount });
  }
  return out;
}

/**
 * Checks that `txHash` SUCCEEDED on our ledger with exactly one transfer from the payer (payer → payTo of
 * exactly the amount on the asset). Throws X402Error: `bad_tx_hash`, `tx_not_found` (not on the ledger, or
 * not yet), `tx_failed`, `transfer_mismatch`, `rpc_failed`.
 */
export async function confirmTransfer(
  rpcOrUrl: RpcLike,
  txHash: string,
  expected: ExpectedTransfer,
): Promise<ConfirmedTransfer> {
  if (typeof txHash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(txHash))
    throw new X402Error('bad_tx_hash', `not a transaction hash: ${String(txHash).slice(0, 80)}`);
  // The raw answer: only the contract events are decoded (the SDK would decode the whole envelope, result
  // and meta of every payment confirmed).
  let res: rpc.Api.RawGetTransactionResponse;
  try {
    res = await serverOf(rpcOrUrl)._getTransaction(txHash.toLowerCase());
  } catch (e) {
    throw new X402Error('rpc_failed', `getTransaction failed: ${(e as Error).message}`);
  }
  if (res.status === rpc.Api.GetTransactionStatus.NOT_FOUND)
    throw new X402Error('tx_not_found', `transaction ${txHash} is not on the ledger`, { txHash });
  if (res.status !== rpc.Api.GetTransactionStatus.SUCCESS)
    throw new X402Error('tx_failed', `transaction ${txHash} failed on the ledger`, {
      txHash,
      ledger: res.ledger,
    });
  const amount = BigInt(expected.amount);
  let events: xdr.ContractEvent[];
  try {
    events = contractEventsOf(res);
  } catch (e) {
    throw new X402Error(
      'rpc_failed',
      `the RPC's events for ${txHash} cannot be read: ${(e as Error).message}`,
    );
  }
  const fromPayer = transfersIn(events, expected.asset).filter((t) => t.from === expected.payer);
  const ok = fromPayer.length === 1 && fromPayer[0]?.to === expected.payTo && fromPayer[0].amount === amount;
  if (!ok) {
    throw new X402Error(
      'transfer_mismatch',
      `transaction ${txHash} does not carry exactly one transfer ${expected.payer} → ${expected.payTo} of ${amount}`,
      { txHash, found: fromPayer.map((t) => ({ ...t, amount: t.amount.toString() })) },
    );
  }
  return { txHash: res.txHash, ledger: Number(res.ledger), createdAt: Number(res.createdAt) };
}

/** A transaction's contract events: the RPC's `events` field, or its result meta where an RPC has no such field. */
function contractEventsOf(res: rpc.Api.RawGetTransactionResponse): xdr.ContractEvent[] {
  const perOp = res.events?.contractEventsXdr;
  if (perOp) return perOp.flat().map((e) => xdr.ContractEvent.fromXdr(e, 'base64'));
  if (!res.resultMetaXdr) return [];
  const meta = xdr.TransactionMeta.fromXdr(res.resultMetaXdr, 'base64');
  if (meta.type === 'v3') return (meta.value as xdr.TransactionMetaV3).sorobanMeta?.events ?? [];
  if (meta.type === 'v4') return (meta.value as xdr.TransactionMetaV4).operations.flatMap((op) => op.events);
  return [];
}

/** What a signed payment's record must hold for reconciliation (PaymentRecord from pay.ts fits). */
export interface AuthorizationRecord extends ExpectedTransfer {
  /** the authorization's nonce (i64 decimal) */
  nonce: string;
  expirationLedger: number;
  signedAtLedger: number;
}

export type AuthorizationUse =
  | { state: 'used'; txHash: string; ledger: number }
  /** not used, and past its expiration ledger: it can never be used */
  | { state: 'unused_expired'; latestLedger: number }
  /** not used yet, but still valid until expirationLedger */
  | { state: 'pending'; latestLedger: number; expirationLedger: number };

/** The address-credential nonces `payer` signed in a transaction envelope (base64). */
function noncesSignedBy(envelopeXdr: string, payer: string): string[] {
  const env = xdr.TransactionEnvelope.fromXdr(envelopeXdr, 'base64');
  const inner =
    env.type === 'envelopeTypeTxFeeBump'
      ? (env.value as xdr.FeeBumpTransactionEnvelope).tx.innerTx.value
      : env.value;
  const out: string[] = [];
  const operations = (inner as xdr.TransactionV1Envelope).tx?.operations ?? [];
  for (const op of operations) {
    if (op.body.type !== 'invokeHostFunction') continue;
    for (const entry of (op.body.value as xdr.InvokeHostFunctionOp).auth) {
      const c = entry.credentials;
      if (c.type !== 'sorobanCredentialsAddress' && c.type !== 'sorobanCredentialsAddressV2') continue;
      const ac = c.value as xdr.SorobanAddressCredentials;
      if (Address.fromScAddress(ac.address).toString() === payer)
        out.push(BigInt(ac.nonce as unknown as bigint).toString());
    }
  }
  return out;
}

const EVENTS_PAGE = 200;

/**
 * Whether the authorization in `record` was used: scans the asset's transfer events payer → payTo from the
 * ledger after signing through its expiration ledger (or the latest), and for each one of the amount reads
 * its transaction and looks for the nonce. Throws `history_unavailable` when the RPC no longer keeps the
 * ledgers to scan, `rpc_failed` on RPC errors.
 */
export function findAuthorizationUse(
  rpcOrUrl: RpcLike,
  record: AuthorizationRecord,
): Promise<AuthorizationUse> {
  return findAnyAuthorizationUse(rpcOrUrl, [record]);
}

/**
 * Whether any of the authorizations of one payment (its attempts: the same transfer, each with its nonce and
 * expiration) was used. The chain consumes a nonce once, so at most one transfer can carry any one of them;
 * `unused_expired` only when every attempt is past its expiration unused.
 */
export async function findAnyAuthorizationUse(
  rpcOrUrl: RpcLike,
  attempts: readonly AuthorizationRecord[],
): Promise<AuthorizationUse> {
  const first = attempts[0];
  if (first === undefined) throw new RangeError('no authorization to look for');
  if (attempts.some((a) => a.payer !== first.payer || a.payTo !== first.payTo || a.asset !== first.asset))
    throw new RangeError('the attempts are not one transfer');
  const record = {
    ...first,
    signedAtLedger: Math.min(...attempts.map((a) => a.signedAtLedger)),
    expirationLedger: Math.max(...attempts.map((a) => a.expirationLedger)),
  };
  const nonces = new Set(attempts.map((a) => a.nonce));
  const server = serverOf(rpcOrUrl);
  const amount = BigInt(record.amount);
  const topic = (v: xdr.ScVal) => v.toXdr('base64');
  const filter: rpc.Api.EventFilter = {
    type: 'contract',
    contractIds: [record.asset],
    topics: [
      [
        topic(nativeToScVal('transfer', { type: 'symbol' })),
        topic(new Address(record.payer).toScVal()),
        topic(new Address(record.payTo).toScVal()),
        '**',
      ],
    ],
  };
  try {
    // the ledger range to scan is fixed before reading it, so "not found" covers the whole range
    const latest = (await server._getLatestLedger()).sequence; // raw: the parsed answer decodes the close metadata
    const start = record.signedAtLedger + 1;
    const last = Math.min(record.expirationLedger, latest);
    if (start <= last) {
      const { oldestLedger } = await server.getHealth();
      if (oldestLedger > start)
        throw new X402Error(
          'history_unavailable',
          `the RPC keeps ledgers from ${oldestLedger}, not ${start}`,
          {
            oldestLedger,
          },
        );
      let page = await server.getEvents({
        filters: [filter],
        startLedger: start,
        // (exclusive; left open when the range reaches the latest ledger, which some RPCs require)
        ...(last < latest && { endLedger: last + 1 }),
        limit: EVENTS_PAGE,
      });
      for (;;) {
        for (const ev of page.events) {
          if (ev.ledger > last || amountOf(scValToNative(ev.value)) !== amount) continue;
          const raw = await server._getTransaction(ev.txHash);
          if (raw.status !== rpc.Api.GetTransactionStatus.SUCCESS || !raw.envelopeXdr) continue;
          if (noncesSignedBy(raw.envelopeXdr, record.payer).some((n) => nonces.has(n)))
            return { state: 'used', txHash: ev.txHash, ledger: ev.ledger };
        }
        if (page.events.length < EVENTS_PAGE) break;
        page = await server.getEvents({ filters: [filter], cursor: page.cursor, limit: EVENTS_PAGE });
      }
    }
    if (latest > record.expirationLedger) return { state: 'unused_expired', latestLedger: latest };
    return { state: 'pending', latestLedger: latest, expirationLedger: record.expirationLedger };
  } catch (e) {
    if (e instanceof X402Error) throw e;
    throw new X402Error('rpc_failed', `reading the ledger failed: ${(e as Error).message}`);
  }
}

/** One token transfer made from `payer` with its signed authorization, as the chain shows it. */
export interface AuthorizedTransfer {
  txHash: string;
  ledger: number;
  /** ledger close time (ISO 8601) */
  closedAt: string;
  payTo: string;
  amount: bigint;
  /** the payer's address-credential nonces in the transaction (i64) */
  nonces: bigint[];
}

/**
 * Every successful `transfer` of `asset` from `payer` since `startLedger`, with the nonces the payer signed
 * for it: what a payer that derives its nonces needs to find its past payments again.
 */
export async function* transfersFrom(
  rpcOrUrl: RpcLike,
  asset: string,
  payer: string,
  startLedger: number,
): AsyncGenerator<AuthorizedTransfer> {
  const server = serverOf(rpcOrUrl);
  const topic = (v: xdr.ScVal) => v.toXdr('base64');
  const filter: rpc.Api.EventFilter = {
    type: 'contract',
    contractIds: [asset],
    topics: [
      [topic(nativeToScVal('transfer', { type: 'symbol' })), topic(new Address(payer).toScVal()), '*', '**'],
    ],
  };
  let page = await server.getEvents({ filters: [filter], startLedger, limit: EVENTS_PAGE });
  for (;;) {
    for (const ev of page.events) {
      if (!ev.inSuccessfulContractCall) continue;
      const amount = amountOf(scValToNative(ev.value));
      const to = ev.topic[2];
      if (amount === undefined || to === undefined) continue;
      const raw = await server._getTransaction(ev.txHash);
      if (raw.status !== rpc.Api.GetTransactionStatus.SUCCESS || !raw.envelopeXdr) continue;
      yield {
        txHash: ev.txHash,
        ledger: ev.ledger,
        closedAt: ev.ledgerClosedAt,
        payTo: String(scValToNative(to)),
        amount,
        nonces: noncesSignedBy(raw.envelopeXdr, payer).map((n) => BigInt(n)),
      };
    }
    if (page.events.length < EVENTS_PAGE) return;
    page = await server.getEvents({ filters: [filter], cursor: page.cursor, limit: EVENTS_PAGE });
  }
}
