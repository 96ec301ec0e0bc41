// The ASP registrar decides by the clock it is given (the proxy's), never the wall clock: slot times, the
// validity it promises a proof and a request's hold limit. No ledger is needed for these
// decisions, so the registrar runs here over stubs, with a clock a long way from the real one.
import test from 'ava';
import type { AgentKeyring } from '../../src/proxy/services/agent-keyring.ts';
import { AspRegistrar } from '../../src/proxy/services/asp-registrar.ts';
import type { ChainClient } from '../../src/proxy/services/chain-client.ts';
import type { Deployment } from '../../src/proxy/services/deployment.ts';
import type { PoolIndexer } from '../../src/proxy/services/pool-indexer.ts';
import { KeyedMutex } from '../../src/proxy/util/keyed-mutex.ts';
import { silentLogger } from '../../src/proxy/util/logger.ts';

const schedule = { slotMs: 10_000, windowMs: 3_000, perSlot: 4, holdMs: 5_000 };
/** Ten years ahead of the real clock, on a slot boundary. */
const FAR = Math.ceil((Date.now() + 10 * 365 * 86_400_000) / schedule.slotMs) * schedule.slotMs;

function registrar(clock: () => number): AspRegistrar {
  const indexer = { aspTree: { root: 7n, nextIndex: 0, leaf: () => 0n } } as unknown as PoolIndexer;
  return new AspRegistrar({
    ledger: {} as ChainClient,
    deployment: {} as Deployment,
    indexer,
    keyring: {} as AgentKeyring,
    logger: silentLogger,
    schedule,
    clock,
    insertLease: new KeyedMutex(),
  });
}

test('the registrar promises validity until the next slot on its own clock', async (t) => {
  let now = FAR + 1_000;
  const r = registrar(() => now);
  t.is(r.holdUntil(), now + schedule.holdMs, 'the hold limit is read on the given clock');
  // Well before the next slot: valid until it.
  t.deepEqual(await r.proofWindow('early'), { aspRoot: 7n, validUntil: FAR + schedule.slotMs });
  // Within the signing window (and a proof) of a slot with nothing queued: the slot is closed, valid until the
  // following one.
  now = FAR + schedule.slotMs - 2_000;
  t.deepEqual(await r.proofWindow('late'), { aspRoot: 7n, validUntil: FAR + 2 * schedule.slotMs });
  r.release('early');
  r.release('late');
  r.stop();
});
