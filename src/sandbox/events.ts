// getEvents: Soroban RPC's event query over the stored contract events — ledger range or cursor, up to 5
// filters (OR) each with contract ids and topic patterns ("*" one segment, "**" any tail), paging by id.
import { StrKey, xdr } from '#stellar-sdk';
import { InvalidRequest } from './envelope.ts';
import type { EventRecord, LedgerState } from './ledger-state.ts';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 10_000;

interface Filter {
  type?: string;
  contractIds?: string[];
  topics?: string[][];
}

export interface EventsRequest {
  startLedger?: number;
  endLedger?: number;
  filters?: Filter[];
  pagination?: { cursor?: string; limit?: number };
}

function parseFilters(raw: unknown): Filter[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new InvalidRequest('filters must be an array');
  if (raw.length > 5) throw new InvalidRequest('maximum 5 filters per request');
  return raw.map((f, i) => {
    if (typeof f !== 'object' || f === null) throw new InvalidRequest(`filter ${i} must be an object`);
    const { type, contractIds, topics } = f as Filter;
    if (type !== undefined && !['contract', 'system', 'diagnostic'].includes(type)) {
      throw new InvalidRequest(`filter ${i}: invalid event type ${String(type)}`);
    }
    if (contractIds !== undefined) {
      if (!Array.isArray(contractIds) || contractIds.length > 5)
        throw new InvalidRequest(`filter ${i}: at most 5 contractIds`);
      for (const id of contractIds) {
        if (typeof id !== 'string' || !StrKey.isValidContract(id))
          throw new InvalidRequest(`filter ${i}: invalid contract ID ${String(id)}`);
      }
    }
    if (topics !== undefined) {
      if (!Array.isArray(topics) || topics.length > 5)
        throw new InvalidRequest(`filter ${i}: at most 5 topic filters`);
      for (const t of topics) {
        if (!Array.isArray(t) || t.length === 0 || t.length > 5)
          throw new InvalidRequest(`filter ${i}: a topic filter has 1 to 5 segments`);
        t.forEach((seg, j) => {
          if (seg === '*' || (seg === '**' && j === t.length - 1)) return;
          try {
            xdr.ScVal.fromXdr(String(seg), 'base64');
          } catch {
            throw new InvalidRequest(`filter ${i}: topic segment ${j} is not a base64 ScVal`);
          }
        });
      }
    }
    return { type, contractIds, topics };
  });
}

function topicMatches(pattern: string[], topics: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const seg = pattern[i];
    if (seg === '**') return true;
    if (i >= topics.length) return false;
    if (seg !== '*' && seg !== topics[i]) return false;
  }
  return pattern.length === topics.length;
}

function matches(filters: Filter[], ev: EventRecord): boolean {
  if (filters.length === 0) return true;
  return filters.some(
    (f) =>
      (f.type === undefined || f.type === 'contract') &&
      (!f.contractIds || f.contractIds.length === 0 || f.contractIds.includes(ev.contractId)) &&
      (!f.topics || f.topics.length === 0 || f.topics.some((p) => topicMatches(p, ev.topics))),
  );
}

/** Cursor that sorts before every event of `ledger`. */
function ledgerCursor(ledger: number): string {
  return `${(BigInt(ledger) << 32n).toString().padStart(19, '0')}-0000000000`;
}

export function queryEvents(state: LedgerState, params: unknown) {
  if (typeof params !== 'object' || params === null) throw new InvalidRequest('params must be an object');
  const req = params as EventsRequest;
  const meta = state.meta;
  if (!meta) throw new InvalidRequest('ledger not initialised');
  const filters = parseFilters(req.filters);
  const pagination = req.pagination ?? {};
  const limit = pagination.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new InvalidRequest(`limit must be 1..${MAX_LIMIT}`);
  let after: string;
  let endLedger = meta.sequence + 1;
  if (pagination.cursor !== undefined) {
    if (req.startLedger !== undefined) throw new InvalidRequest('startLedger and cursor cannot both be set');
    if (typeof pagination.cursor !== 'string' || !/^\d{19}-\d{10}$/.test(pagination.cursor)) {
      throw new InvalidRequest(`invalid cursor ${String(pagination.cursor)}`);
    }
    after = pagination.cursor;
  } else {
    const start = req.startLedger;
    if (!Number.isInteger(start))
      throw new InvalidRequest('startLedger is required (a ledger number) when no cursor is given');
    if ((start as number) < meta.oldestLedger || (start as number) > meta.sequence) {
      throw new InvalidRequest(
        `startLedger must be between the oldest ledger: ${meta.oldestLedger} and the latest ledger: ${meta.sequence}`,
      );
    }
    after = ledgerCursor(start as number);
  }
  if (req.endLedger !== undefined) {
    if (!Number.isInteger(req.endLedger) || (req.endLedger as number) <= 0)
      throw new InvalidRequest('endLedger must be a ledger number');
    endLedger = Math.min(endLedger, req.endLedger as number);
  }
  const end = ledgerCursor(endLedger);
  const out: EventRecord[] = [];
  // events are sorted by id; binary search the first one after the cursor
  let lo = 0;
  let hi = state.events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((state.events[mid] as EventRecord).id <= after) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < state.events.length && out.length < limit; i++) {
    const ev = state.events[i] as EventRecord;
    if (ev.id >= end) break;
    if (matches(filters, ev)) out.push(ev);
  }
  const cursor = out.length === limit ? (out[out.length - 1] as EventRecord).id : end;
  return {
    events: out.map((ev) => ({
      type: 'contract',
      ledger: ev.ledger,
      ledgerClosedAt: ev.ledgerClosedAt,
      contractId: ev.contractId,
      id: ev.id,
      pagingToken: ev.id,
      operationIndex: ev.operationIndex,
      transactionIndex: ev.transactionIndex,
      txHash: ev.txHash,
      inSuccessfulContractCall: true,
      topic: ev.topics,
      value: ev.value,
    })),
    cursor,
    latestLedger: meta.sequence,
    oldestLedger: meta.oldestLedger,
    latestLedgerCloseTime: String(meta.closeTime),
    oldestLedgerCloseTime: String(meta.oldestCloseTime),
  };
}
