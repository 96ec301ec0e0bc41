import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError } from '../../src/proxy/domain/errors.ts';
import { type NewNote, NoteBook } from '../../src/proxy/services/notebook.ts';
import { EncryptedStore } from '../../src/proxy/store/encrypted-store.ts';

async function book(): Promise<{ notes: NoteBook; store: EncryptedStore }> {
  const store = await EncryptedStore.open(mkdtempSync(join(tmpdir(), 'pp-notes-')), randomBytes(32));
  return { notes: new NoteBook(store), store };
}

const note = (commitment: bigint, amount: bigint, leafIndex = Number(commitment)): NewNote => ({
  commitment,
  amount,
  blinding: commitment * 7n,
  leafIndex,
  nullifier: commitment * 1000n,
});

test('credits are keyed by commitment: replays add nothing', async (t) => {
  const { notes, store } = await book();
  t.is(await notes.credit('a', [note(1n, 100n), note(2n, 50n)]), 150n);
  t.is(await notes.credit('a', [note(1n, 100n), note(2n, 50n)]), 0n);
  t.is(await notes.credit('a', [note(2n, 50n), note(3n, 5n)]), 5n);
  t.is(await notes.available('a'), 155n);
  t.is(await notes.available('b'), 0n, 'agents are separate');
  await store.close();
});

test('reservations: insufficient balance changes nothing; concurrent reservations never overdraw', async (t) => {
  const { notes, store } = await book();
  await notes.credit('a', [note(1n, 100n)]);
  const error = await t.throwsAsync(notes.reserve('a', 'op-big', 101n), { instanceOf: DomainError });
  t.is(error!.code, 'insufficient_balance');
  t.is(await notes.available('a'), 100n);
  const results = await Promise.allSettled(
    Array.from({ length: 10 }, (_, i) => notes.reserve('a', `op-${i}`, 30n)),
  );
  t.is(results.filter((r) => r.status === 'fulfilled').length, 3);
  t.is(await notes.available('a'), 10n);
  await notes.release('a', 'op-0');
  t.is(await notes.available('a'), 40n);
  await notes.release('a', 'op-0');
  t.is(await notes.available('a'), 40n, 'release is idempotent');
  await store.close();
});

test('a confirmed spend moves notes and the reservation into one atomic change; replays are no-ops', async (t) => {
  const { notes, store } = await book();
  await notes.credit('a', [note(1n, 100n), note(2n, 20n)]);
  await notes.reserve('a', 'w1', 70n);
  const locked = await notes.lock('a', 'w1', [1n]);
  t.is(locked[0].state, 'locked');
  t.deepEqual(
    (await notes.unspentNotes('a')).map((n) => n.commitment),
    [2n],
  );
  await t.throwsAsync(notes.lock('a', 'w2', [1n]), { message: /not unspent/ });
  t.is(await notes.available('a'), 50n);
  const spend = { opId: 'w1', txHash: 'h', inputs: [1n], outputs: [note(9n, 30n)] };
  await notes.applySpend('a', spend);
  t.is(await notes.available('a'), 50n, '120 − 100 spent + 30 change, reservation gone');
  t.is((await notes.account('a')).notes, 50n);
  await notes.applySpend('a', spend);
  t.is((await notes.account('a')).notes, 50n, 'replay changes nothing');
  const all = await notes.notes('a');
  t.is(all.find((n) => n.commitment === 1n)!.state, 'spent');
  t.is(all.find((n) => n.commitment === 9n)!.state, 'unspent');
  await store.close();
});

test('a failed operation releases its locked notes and reservation', async (t) => {
  const { notes, store } = await book();
  await notes.credit('a', [note(1n, 10n)]);
  await notes.reserve('a', 'w', 10n);
  await notes.lock('a', 'w', [1n]);
  t.is(await notes.available('a'), 0n);
  await notes.release('a', 'w');
  t.is(await notes.available('a'), 10n);
  t.deepEqual(
    (await notes.unspentNotes('a')).map((n) => n.commitment),
    [1n],
  );
  await store.close();
});

test('payments: a committed reservation becomes an unsettled debit until settlement spends notes', async (t) => {
  const { notes, store } = await book();
  await notes.credit('a', [note(1n, 100n)]);
  await notes.reserve('a', 'pay-1', 25n);
  await notes.commitReservation('a', 'pay-1');
  t.is(await notes.available('a'), 75n);
  t.is((await notes.account('a')).unsettled, 25n);
  t.false(await notes.commitReservation('a', 'pay-1'), 'a replayed commit changes nothing');
  t.is((await notes.account('a')).unsettled, 25n);
  // A settlement that fails gives the debt back; one that lands consumes it with the note.
  await notes.reserveFromUnsettled('a', 'settle-0', 25n);
  await notes.lock('a', 'settle-0', [1n]);
  t.is(await notes.available('a'), 75n, 'settling moves the debt, available is unchanged');
  await notes.returnToUnsettled('a', 'settle-0');
  t.is((await notes.account('a')).unsettled, 25n);
  t.is((await notes.unspentNotes('a')).length, 1, 'the note is unlocked');
  await notes.reserveFromUnsettled('a', 'settle-1', 25n);
  await notes.lock('a', 'settle-1', [1n]);
  await notes.applySpend('a', { opId: 'settle-1', txHash: 's', inputs: [1n], outputs: [note(2n, 75n)] });
  const account = await notes.account('a');
  t.is(account.unsettled, 0n);
  t.is(account.notes, 75n);
  t.is(await notes.available('a'), 75n);
  await store.close();
});
