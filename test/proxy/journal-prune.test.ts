// The journal's housekeeping on a real encrypted LevelDB store: pruning deletes exactly the final operations of
// the given kinds last updated before the cut-off — never an open one, a recent one or one of another kind — in
// batches, so a journal longer than one batch is pruned whole; what it keeps reads back unchanged.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { Journal, type OperationKind, type OperationState } from '../../src/proxy/journal/journal.ts';
import { EncryptedStore } from '../../src/proxy/store/encrypted-store.ts';

const DAY = 86_400_000;

async function journalAt(t: { teardown(f: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'pp-journal-'));
  const store = await EncryptedStore.open(dir, randomBytes(32));
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  let now = 1_800_000_000_000;
  const journal = new Journal(store, undefined, () => now);
  /** An operation of `kind` begun now, moved to `state`. */
  const op = async (kind: OperationKind, state: OperationState) => {
    const record = await journal.begin({
      opId: randomUUID(),
      kind,
      agent: 'w/a',
      amount: 1n,
      state: 'reserved',
    });
    if (state !== 'reserved') await journal.update(record.opId, { state });
    return record.opId;
  };
  return { journal, op, advance: (ms: number) => (now += ms), now: () => now };
}

test('only final operations of the given kinds, older than the cut-off, are deleted', async (t) => {
  const { journal, op, advance, now } = await journalAt(t);
  const old = {
    withdrawal: await op('withdraw', 'confirmed'),
    failedDeposit: await op('wallet_deposit', 'failed'),
    expiredDeposit: await op('wallet_deposit', 'expired'),
    payment: await op('payment', 'confirmed'),
    openWithdrawal: await op('withdraw', 'submitted'),
  };
  advance(8 * DAY);
  const recent = await op('withdraw', 'confirmed');
  const pruned = await journal.prune(now() - 7 * DAY, ['withdraw', 'wallet_deposit']);
  t.is(pruned, 3);
  for (const id of [old.withdrawal, old.failedDeposit, old.expiredDeposit])
    t.is(await journal.get(id), undefined, 'pruned');
  t.is((await journal.get(old.payment))?.state, 'confirmed', 'another kind stays');
  t.is((await journal.get(old.openWithdrawal))?.state, 'submitted', 'an open operation stays');
  t.deepEqual(
    (await journal.open()).map((r) => r.opId),
    [old.openWithdrawal],
    'and stays open',
  );
  t.is((await journal.get(recent))?.state, 'confirmed', 'a recent one stays');
  t.is(await journal.prune(now() - 7 * DAY, ['withdraw', 'wallet_deposit']), 0, 'nothing twice');
});

test('a journal longer than one delete batch is pruned whole', async (t) => {
  const { journal, op, advance, now } = await journalAt(t);
  const ids: string[] = [];
  for (let i = 0; i < 1001; i++) ids.push(await op('consolidate', i % 2 === 0 ? 'confirmed' : 'released'));
  const kept = await op('settlement', 'confirmed');
  advance(DAY);
  t.is(await journal.prune(now() - 1, ['consolidate']), 1001);
  for (const id of [ids[0]!, ids[499]!, ids[500]!, ids[1000]!]) t.is(await journal.get(id), undefined);
  t.truthy(await journal.get(kept));
});
