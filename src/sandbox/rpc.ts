// Soroban RPC's JSON-RPC 2.0 methods over the sandbox ledger. Requests and replies follow the
// stellar-rpc OpenRPC schema (the fields @stellar/stellar-sdk's rpc.Server sends and parses). Methods that
// take `xdrFormat` answer in base64 XDR (`…Xdr` fields) or, with "json", in SEP-51 JSON (`…Json` fields)
// as stellar-rpc does (its cmd/stellar-rpc/internal/methods, https://github.com/stellar/stellar-rpc).
import { xdr } from '#stellar-sdk';
import { VERSION } from '../version.ts';
import { queryEvents } from './events.ts';
import { InvalidRequest } from './envelope.ts';
import type { Chain, SendResult } from './chain.ts';
import type { SimulationResult } from './simulation.ts';
import type { TxRecord } from './ledger-state.ts';
import { xdrToJson as json } from './xdr-json.ts';
import { BASE_FEE, PROTOCOL_VERSION } from './xdr-records.ts';
import { ledgerCloseMeta } from './close-meta.ts';

export const RPC_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
} as const;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const MAX_LEDGER_KEYS = 200;

/** Paging token of a transaction: its TOID (ledger, application order). */
const txCursor = (ledgerSeq: number, order: number) => (BigInt(ledgerSeq) << 32n) | (BigInt(order) << 12n);
const RETENTION_WINDOW = 120_960;

type Params = Record<string, unknown>;

/** How a method encodes the XDR in its reply. */
export type XdrFormat = 'base64' | 'json';

/** How many ledgers' close metadata (base64) the RPC keeps: the latest few, which clients ask for. */
const CLOSE_META_CACHED = 8;

/** The request's `xdrFormat`: absent, "" or "base64" is base64; "json" is JSON; anything else is refused. */
function xdrFormatOf(params: unknown): XdrFormat {
  const raw = typeof params === 'object' && params !== null ? (params as Params).xdrFormat : undefined;
  // null decodes as absent in stellar-rpc (Go's JSON decoding leaves the string empty)
  if (raw === undefined || raw === null || raw === '' || raw === 'base64') return 'base64';
  if (raw === 'json') return 'json';
  // stellar-rpc's wording (protocol.IsValidFormat)
  const got = typeof raw === 'string' ? `'${raw}'` : JSON.stringify(raw);
  throw new RpcError(RPC_ERRORS.invalidParams, `got ${got}: expected base64, json for optional 'xdrFormat'`);
}

/** LedgerEntryExt v0: the sandbox keeps no sponsorship or other entry extension. */
const ENTRY_EXT_V0 = xdr.LedgerEntryExt.v0().toXdr('base64');

/** A transaction's XDR fields (getTransaction, getTransactions) in the requested format. */
function txFields(r: TxRecord, format: XdrFormat) {
  if (format === 'base64') {
    return {
      envelopeXdr: r.envelopeXdr,
      resultXdr: r.resultXdr,
      resultMetaXdr: r.resultMetaXdr,
      diagnosticEventsXdr: r.diagnosticEvents,
      events: {
        contractEventsXdr: r.contractEvents,
        transactionEventsXdr: r.transactionEvents ?? [],
      },
    };
  }
  return {
    envelopeJson: json('TransactionEnvelope', r.envelopeXdr),
    resultJson: json('TransactionResult', r.resultXdr),
    resultMetaJson: json('TransactionMeta', r.resultMetaXdr),
    diagnosticEventsJson: r.diagnosticEvents.map((e) => json('DiagnosticEvent', e)),
    events: {
      contractEventsJson: r.contractEvents.map((op) => op.map((e) => json('ContractEvent', e))),
      transactionEventsJson: (r.transactionEvents ?? []).map((e) => json('TransactionEvent', e)),
    },
  };
}

/** simulateTransaction's reply with its XDR as JSON (stellar-rpc's field names; empty lists omitted). */
function simulationJson(r: SimulationResult) {
  const events = r.events.map((e) => json('DiagnosticEvent', e));
  const eventsJson = events.length ? { eventsJson: events } : {};
  if ('error' in r) return { error: r.error, ...eventsJson };
  return {
    transactionDataJson: json('SorobanTransactionData', r.transactionData),
    minResourceFee: r.minResourceFee,
    ...(r.results && {
      results: r.results.map((res) => ({
        authJson: res.auth.map((a) => json('SorobanAuthorizationEntry', a)),
        returnValueJson: json('ScVal', res.xdr),
      })),
    }),
    ...eventsJson,
    ...(r.restorePreamble && {
      restorePreamble: {
        transactionDataJson: json('SorobanTransactionData', r.restorePreamble.transactionData),
        minResourceFee: r.restorePreamble.minResourceFee,
      },
    }),
    ...(r.stateChanges?.length && {
      // stellar-rpc keeps `before`/`after` (null) beside their JSON forms
      stateChanges: r.stateChanges.map((c) => ({
        type: c.type,
        keyJson: json('LedgerKey', c.key),
        before: null,
        after: null,
        ...(c.before !== null && { beforeJson: json('LedgerEntry', c.before) }),
        ...(c.after !== null && { afterJson: json('LedgerEntry', c.after) }),
      })),
    }),
  };
}

/** sendTransaction's reply with its error result and diagnostic events as JSON. */
function sendJson(r: SendResult) {
  const { errorResultXdr, diagnosticEventsXdr, ...rest } = r;
  return {
    ...rest,
    ...(errorResultXdr !== undefined && { errorResultJson: json('TransactionResult', errorResultXdr) }),
    ...(diagnosticEventsXdr !== undefined && {
      diagnosticEventsJson: diagnosticEventsXdr.map((e) => json('DiagnosticEvent', e)),
    }),
  };
}

function objectParams(params: unknown, required: string[] = []): Params {
  if (params === undefined || params === null) {
    if (required.length)
      throw new RpcError(RPC_ERRORS.invalidParams, `missing params: ${required.join(', ')}`);
    return {};
  }
  if (typeof params !== 'object' || Array.isArray(params))
    throw new RpcError(RPC_ERRORS.invalidParams, 'params must be an object');
  for (const r of required) {
    if ((params as Params)[r] === undefined)
      throw new RpcError(RPC_ERRORS.invalidParams, `missing required param ${r}`);
  }
  return params as Params;
}

/**
 * Inclusion-fee distribution over recent ledgers, as Soroban RPC's getFeeStats reports it: nearest-rank
 * percentiles and the mode of the fees paid; with no transactions, every field is the base fee.
 */
export function feeDistribution(samples: bigint[], ledgerCount: number) {
  const fees = [...samples].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const at = (p: number) => {
    if (fees.length === 0) return BASE_FEE;
    return fees[Math.max(0, Math.ceil((p / 100) * fees.length) - 1)] as bigint;
  };
  const counts = new Map<bigint, number>();
  for (const f of fees) counts.set(f, (counts.get(f) ?? 0) + 1);
  let mode = BASE_FEE;
  let best = 0;
  for (const [f, n] of counts) {
    if (n > best || (n === best && f < mode)) [mode, best] = [f, n];
  }
  const pct = (p: number) => at(p).toString();
  return {
    max: (fees[fees.length - 1] ?? BASE_FEE).toString(),
    min: (fees[0] ?? BASE_FEE).toString(),
    mode: mode.toString(),
    p10: pct(10),
    p20: pct(20),
    p30: pct(30),
    p40: pct(40),
    p50: pct(50),
    p60: pct(60),
    p70: pct(70),
    p80: pct(80),
    p90: pct(90),
    p95: pct(95),
    p99: pct(99),
    transactionCount: String(fees.length),
    ledgerCount,
  };
}

export function createRpc(chain: Chain, friendbotUrl: () => string) {
  const latestFields = () => {
    const m = chain.latest;
    return { latestLedger: m.sequence, latestLedgerCloseTime: String(m.closeTime) };
  };
  const rangeFields = () => {
    const m = chain.latest;
    return {
      ...latestFields(),
      oldestLedger: m.oldestLedger,
      oldestLedgerCloseTime: String(m.oldestCloseTime),
    };
  };

  // A closed ledger's LedgerCloseMeta never changes, and building it costs a few milliseconds per
  // transaction in it: the latest ones are kept, since every getLatestLedger returns the latest's (during a
  // burst of payments, clients ask several times a ledger).
  const metaCache = new Map<string, string>();
  const closeMetaXdr = (
    { hash, sequence }: { hash: string; sequence: number },
    header: () => xdr.LedgerHeader,
  ): string => {
    let meta = metaCache.get(hash);
    if (meta === undefined) {
      meta = ledgerCloseMeta(
        header(),
        Buffer.from(hash, 'hex'),
        chain.state.txsByLedger.get(sequence) ?? [],
      ).toXdr('base64');
      metaCache.set(hash, meta);
      if (metaCache.size > CLOSE_META_CACHED) metaCache.delete(metaCache.keys().next().value as string);
    }
    return meta;
  };

  const methods: Record<string, (params: unknown, format: XdrFormat) => unknown | Promise<unknown>> = {
    getHealth: () => {
      const m = chain.latest;
      return {
        status: 'healthy',
        latestLedger: m.sequence,
        oldestLedger: m.oldestLedger,
        ledgerRetentionWindow: chain.state.retentionLedgers ?? RETENTION_WINDOW,
      };
    },
    getNetwork: () => ({
      friendbotUrl: friendbotUrl(),
      passphrase: chain.passphrase,
      protocolVersion: PROTOCOL_VERSION,
    }),
    getVersionInfo: () => ({
      version: `privacy-pool-proxy-sandbox ${VERSION}`,
      commitHash: '',
      buildTimestamp: '',
      captiveCoreVersion: 'sandbox',
      protocolVersion: PROTOCOL_VERSION,
    }),
    getLatestLedger: (_params, format) => {
      // stellar-rpc's getLatestLedger takes no xdrFormat: its header and metadata are always base64
      if (format === 'json') {
        throw new RpcError(
          RPC_ERRORS.invalidParams,
          'getLatestLedger takes no xdrFormat: its headerXdr and metadataXdr are always base64 (use getLedgers for JSON)',
        );
      }
      const m = chain.latest;
      return {
        id: m.hash,
        sequence: m.sequence,
        protocolVersion: PROTOCOL_VERSION,
        closeTime: String(m.closeTime),
        headerXdr: m.headerXdr,
        metadataXdr: closeMetaXdr(m, () => xdr.LedgerHeader.fromXdr(m.headerXdr, 'base64')),
      };
    },
    getFeeStats: () => {
      const recent = chain.recentFees;
      return {
        sorobanInclusionFee: feeDistribution(
          recent.flatMap((l) => l.fees),
          recent.length,
        ),
        // classic inclusion fees over the last 10 ledgers, as Soroban RPC reports them
        inclusionFee: feeDistribution(
          recent.slice(-10).flatMap((l) => l.classic),
          Math.min(recent.length, 10),
        ),
        latestLedger: chain.latest.sequence,
      };
    },
    getLedgerEntries: (params, format) => {
      const p = objectParams(params, ['keys']);
      if (!Array.isArray(p.keys))
        throw new RpcError(RPC_ERRORS.invalidParams, 'keys must be an array of base64 LedgerKeys');
      if (p.keys.length === 0 || p.keys.length > MAX_LEDGER_KEYS) {
        throw new RpcError(RPC_ERRORS.invalidParams, `between 1 and ${MAX_LEDGER_KEYS} keys are allowed`);
      }
      const entries = [];
      for (const [i, raw] of p.keys.entries()) {
        let key: string;
        try {
          key = xdr.LedgerKey.fromXdr(String(raw), 'base64').toXdr('base64');
        } catch {
          throw new RpcError(RPC_ERRORS.invalidParams, `cannot unmarshal key value ${i}`);
        }
        const rec = chain.state.get(key);
        if (!rec) continue;
        entries.push({
          ...(format === 'json'
            ? {
                keyJson: json('LedgerKey', key),
                dataJson: json('LedgerEntryData', rec.xdr),
                extJson: json('LedgerEntryExt', ENTRY_EXT_V0),
              }
            : { key, xdr: rec.xdr }),
          lastModifiedLedgerSeq: rec.lastModified,
          ...(rec.liveUntil !== undefined && { liveUntilLedgerSeq: rec.liveUntil }),
        });
      }
      return { entries, latestLedger: chain.latest.sequence };
    },
    simulateTransaction: async (params, format) => {
      const p = objectParams(params, ['transaction']);
      const result = chain.simulate(p.transaction, p.authMode, p.useUpgradedAuth, p.resourceConfig);
      return {
        ...(format === 'json' ? simulationJson(result) : result),
        latestLedger: chain.latest.sequence,
      };
    },
    sendTransaction: (params, format) => {
      const p = objectParams(params, ['transaction']);
      const sent = chain.submit(p.transaction);
      return { ...(format === 'json' ? sendJson(sent) : sent), ...latestFields() };
    },
    getTransaction: (params, format) => {
      const p = objectParams(params, ['hash']);
      if (typeof p.hash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(p.hash)) {
        throw new RpcError(RPC_ERRORS.invalidParams, 'unexpected hash length (expected 64 hex characters)');
      }
      const rec = chain.state.txs.get(p.hash.toLowerCase());
      if (!rec) return { status: 'NOT_FOUND', txHash: p.hash, ...rangeFields() };
      return {
        status: rec.status,
        txHash: rec.hash,
        ...rangeFields(),
        applicationOrder: rec.applicationOrder,
        feeBump: rec.feeBump,
        ...txFields(rec, format),
        ledger: rec.ledger,
        createdAt: String(rec.createdAt),
      };
    },
    getEvents: (params, format) => {
      const page = queryEvents(chain.state, objectParams(params));
      if (format === 'base64') return page;
      return {
        ...page,
        events: page.events.map(({ topic, value, ...ev }) => ({
          ...ev,
          topicJson: topic.map((t) => json('ScVal', t)),
          valueJson: json('ScVal', value),
        })),
      };
    },
    getLedgers: (params, format) => {
      const p = objectParams(params);
      const pagination = (p.pagination ?? {}) as { cursor?: unknown; limit?: unknown };
      const limit = pagination.limit ?? 100;
      if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 10_000) {
        throw new RpcError(RPC_ERRORS.invalidParams, 'limit must be 1..10000');
      }
      const m = chain.latest;
      let start: number;
      if (pagination.cursor !== undefined) {
        if (p.startLedger !== undefined)
          throw new RpcError(RPC_ERRORS.invalidParams, 'startLedger and cursor cannot both be set');
        if (typeof pagination.cursor !== 'string' || !/^\d{1,10}$/.test(pagination.cursor)) {
          throw new RpcError(RPC_ERRORS.invalidParams, 'invalid cursor');
        }
        start = Number(pagination.cursor) + 1;
      } else {
        start = p.startLedger as number;
        if (!Number.isInteger(start) || start < m.oldestLedger || start > m.sequence) {
          throw new RpcError(
            RPC_ERRORS.invalidParams,
            `startLedger must be between the oldest ledger: ${m.oldestLedger} and the latest ledger: ${m.sequence}`,
          );
        }
      }
      const all = chain.state.ledgers;
      // the first ledger at or after `start` (sequences have gaps where the sandbox was advanced)
      let from = 0;
      for (let hi = all.length; from < hi;) {
        const mid = (from + hi) >>> 1;
        if ((all[mid] as { sequence: number }).sequence < start) from = mid + 1;
        else hi = mid;
      }
      const page = all.slice(from, from + (limit as number));
      const last = page[page.length - 1];
      return {
        ledgers: page.map((r) => {
          const header = xdr.LedgerHeader.fromXdr(r.headerXdr, 'base64');
          const entry = new xdr.LedgerHeaderHistoryEntry({
            hash: Buffer.from(r.hash, 'hex'),
            header,
            ext: xdr.LedgerHeaderHistoryEntryExt.v0(),
          });
          const headerXdr = entry.toXdr('base64');
          const metadataXdr = closeMetaXdr(r, () => header);
          return {
            hash: r.hash,
            sequence: r.sequence,
            ledgerCloseTime: String(r.closeTime),
            // stellar-rpc leaves headerXdr and metadataXdr empty beside their JSON forms
            ...(format === 'json'
              ? {
                  headerXdr: '',
                  headerJson: json('LedgerHeaderHistoryEntry', headerXdr),
                  metadataXdr: '',
                  metadataJson: json('LedgerCloseMeta', metadataXdr),
                }
              : { headerXdr, metadataXdr }),
          };
        }),
        latestLedger: m.sequence,
        latestLedgerCloseTime: m.closeTime,
        oldestLedger: m.oldestLedger,
        oldestLedgerCloseTime: m.oldestCloseTime,
        cursor: String(last ? last.sequence : start - 1),
      };
    },
    getTransactions: (params, format) => {
      const p = objectParams(params);
      const pagination = (p.pagination ?? {}) as { cursor?: unknown; limit?: unknown };
      const limit = pagination.limit ?? 50;
      if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 200) {
        throw new RpcError(RPC_ERRORS.invalidParams, 'limit must be 1..200');
      }
      const m = chain.latest;
      let after: bigint;
      if (pagination.cursor !== undefined) {
        if (p.startLedger !== undefined)
          throw new RpcError(RPC_ERRORS.invalidParams, 'startLedger and cursor cannot both be set');
        if (typeof pagination.cursor !== 'string' || !/^\d{1,20}$/.test(pagination.cursor)) {
          throw new RpcError(RPC_ERRORS.invalidParams, 'invalid cursor');
        }
        after = BigInt(pagination.cursor);
      } else {
        const start = p.startLedger;
        if (
          !Number.isInteger(start) ||
          (start as number) < m.oldestLedger ||
          (start as number) > m.sequence
        ) {
          throw new RpcError(
            RPC_ERRORS.invalidParams,
            `startLedger must be between the oldest ledger: ${m.oldestLedger} and the latest ledger: ${m.sequence}`,
          );
        }
        after = txCursor(start as number, 0);
      }
      const page = [...chain.state.txs.values()]
        .filter((r) => txCursor(r.ledger, r.applicationOrder) > after)
        .sort((a, b) => a.ledger - b.ledger || a.applicationOrder - b.applicationOrder)
        .slice(0, limit as number);
      const last = page[page.length - 1];
      return {
        transactions: page.map((r) => ({
          status: r.status,
          txHash: r.hash,
          applicationOrder: r.applicationOrder,
          feeBump: r.feeBump,
          ...txFields(r, format),
          ledger: r.ledger,
          createdAt: r.createdAt,
        })),
        latestLedger: m.sequence,
        latestLedgerCloseTimestamp: m.closeTime,
        oldestLedger: m.oldestLedger,
        oldestLedgerCloseTimestamp: m.oldestCloseTime,
        cursor: (last ? txCursor(last.ledger, last.applicationOrder) : after).toString(),
      };
    },
  };

  /** Handles one decoded JSON-RPC request object; returns the response object (or undefined for notifications). */
  return async function handle(req: unknown): Promise<Record<string, unknown> | undefined> {
    const id = typeof req === 'object' && req !== null && 'id' in req ? (req as { id: unknown }).id : null;
    const fail = (code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });
    if (typeof req !== 'object' || req === null || Array.isArray(req) || (req as Params).jsonrpc !== '2.0') {
      return fail(RPC_ERRORS.invalidRequest, 'invalid JSON-RPC 2.0 request');
    }
    const { method, params } = req as Params;
    if (typeof method !== 'string') return fail(RPC_ERRORS.invalidRequest, 'method must be a string');
    const fn = Object.hasOwn(methods, method) ? methods[method] : undefined;
    if (!fn) return fail(RPC_ERRORS.methodNotFound, `method not found: ${method}`);
    try {
      let format: XdrFormat;
      try {
        format = xdrFormatOf(params);
      } catch (e) {
        // stellar-rpc's simulateTransaction reports a bad (string) xdrFormat as a simulation error
        const raw = (params as Params).xdrFormat;
        if (method !== 'simulateTransaction' || typeof raw !== 'string') throw e;
        const error = (e as Error).message;
        return { jsonrpc: '2.0', id, result: { error, latestLedger: chain.latest.sequence } };
      }
      return { jsonrpc: '2.0', id, result: await fn(params, format) };
    } catch (e) {
      if (e instanceof RpcError) return fail(e.code, e.message);
      if (e instanceof InvalidRequest) return fail(RPC_ERRORS.invalidParams, e.message);
      return fail(RPC_ERRORS.internal, `internal error: ${(e as Error).message}`);
    }
  };
}
