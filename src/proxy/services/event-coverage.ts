// Whether the pool's events that can be read — the proxy's event archive, then what the RPC still keeps —
// cover the pool's whole history: every commitment from leaf 0 to the pool contract's next index, in order
// (every pool transaction inserts commitments, so a transaction missing is a leaf missing). `pool-proxy store
// recover` refuses, naming the missing leaves and the ledgers they are in, when they do not: a store rebuilt
// from part of the history would show balances the chain does not hold (an RPC with a short memory forgets
// the pool's first events; testnet's keeps about 7 days). Ledgers without pool events between the archive's
// last event and the oldest ledger the RPC keeps are no gap.
import { type rpc, scValToNative, type xdr } from '#stellar-sdk';
import { PoolEvent as PoolEventName } from '../../ledger/pool-interface.ts';
import {
  type ArchiveContracts,
  checkOwnContracts,
  type EventArchive,
  fromArchived,
  type PoolEvent,
} from './event-archive.ts';
import type { PoolReads } from './pool-reads.ts';

const PAGE = 200;

export interface CoverageInput {
  server: rpc.Server;
  reads: PoolReads;
  contracts: ArchiveContracts;
  /** POOL_PROXY_INDEXER_START_LEDGER (0: the oldest ledger the RPC keeps) */
  startLedger: number;
  archive?: EventArchive;
}

/** Where the readable history stops being whole. */
interface Walk {
  /** the next leaf expected */
  next: number;
  /** the first commitment out of order: its leaf and ledger */
  jump?: { leaf: number; ledger: number };
}

/**
 * Follows the pool's commitments of `events` on from `walk.next`, by their position across the pool's trees
 * (tree × `capacity` + leaf index).
 */
function follow(walk: Walk, events: readonly PoolEvent[], pool: string, capacity: number): void {
  for (const e of events) {
    if (walk.jump !== undefined) return;
    if (e.contractId !== pool || scValToNative(e.topic[0] as xdr.ScVal) !== PoolEventName.newCommitment)
      continue;
    const data = scValToNative(e.value) as { index: number; tree?: number };
    const leaf = Number(data.tree ?? 0) * capacity + Number(data.index);
    if (leaf === walk.next) walk.next++;
    else if (leaf > walk.next) walk.jump = { leaf, ledger: e.ledger };
  }
}

/**
 * Undefined when the archive and the RPC hold the pool's whole history; else what is missing (which leaves,
 * which ledgers) and the way out.
 */
export async function findCoverageGap(input: CoverageInput): Promise<string | undefined> {
  const { server, reads, contracts, archive } = input;
  // Read first: the chain may move on while the events are read, never back.
  const capacity = await reads.treeCapacity();
  const chainNext = (await reads.currentTree()) * capacity + (await reads.nextIndex());
  const walk: Walk = { next: 0 };
  let last: PoolEvent | undefined;
  for (let after: string | undefined; archive !== undefined;) {
    const page = await archive.page(after, PAGE);
    if (page.length === 0) break;
    checkOwnContracts(page, contracts, () => 'the event archive');
    follow(walk, page.map(fromArchived), contracts.pool, capacity);
    last = fromArchived(page.at(-1)!);
    after = last.id;
  }
  const oldest = Math.max(1, (await server.getHealth()).oldestLedger ?? 1);
  const held = last === undefined ? 'holds none of them' : `ends at ledger ${last.ledger}`;
  const wayOut =
    'import an export of this deployment that covers them (pool-proxy store import-events), or use an RPC ' +
    'that keeps them, then run recover again';
  if (walk.jump !== undefined)
    return `the event archive lacks the pool's commitments at leaves ${walk.next}–${walk.jump.leaf - 1} (it jumps to leaf ${walk.jump.leaf} at ledger ${walk.jump.ledger}): ${wayOut}`;
  const from = last?.ledger ?? (input.startLedger > 0 ? input.startLedger : oldest);
  const filters = [{ type: 'contract' as const, contractIds: [contracts.pool] }];
  let page = await server.getEvents({ startLedger: Math.max(from, oldest), filters, limit: PAGE });
  for (;;) {
    const events = page.events
      .filter((e) => e.inSuccessfulContractCall && (last === undefined || e.id > last.id))
      .map((e): PoolEvent => ({
        id: e.id,
        ledger: e.ledger,
        txHash: e.txHash,
        contractId: contracts.pool,
        topic: e.topic,
        value: e.value,
      }));
    follow(walk, events, contracts.pool, capacity);
    if (walk.jump !== undefined || page.events.length < PAGE) break;
    page = await server.getEvents({ cursor: page.cursor, filters, limit: PAGE });
  }
  const jump = walk.jump as Walk['jump']; // set by follow()
  const firstRead = last === undefined ? 'the pool’s first ledger' : `ledger ${last.ledger + 1}`;
  if (jump !== undefined)
    return `the pool's commitments at leaves ${walk.next}–${jump.leaf - 1} are in ledgers from ${firstRead} to ${Math.max(from, oldest) - 1}, which neither the event archive (it ${held}) nor the RPC (it keeps ledger ${oldest} on) holds: ${wayOut}`;
  if (walk.next < chainNext)
    return `the pool holds ${chainNext} commitments but the events read give ${walk.next}: its leaves ${walk.next}–${chainNext - 1} are in ledgers from ${firstRead} to ${Math.max(from, oldest) - 1}, which neither the event archive (it ${held}) nor the RPC (it keeps ledger ${oldest} on) holds: ${wayOut}`;
  return undefined;
}
