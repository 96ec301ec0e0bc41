// The proving lane and admission bound on their own: FIFO, one at a time, abandoned waiters leave, an
// abandoned running job keeps the lane until it really ends, slots are bounded and given back once.
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { ProverError } from '../../src/prover/daemon/errors.ts';
import { ProofQueue } from '../../src/prover/daemon/proof-queue.ts';

function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

test('admission is bounded, answers RESOURCE_EXHAUSTED when full and gives slots back once', (t) => {
  const queue = new ProofQueue(2);
  const first = queue.admit();
  const second = queue.admit();
  const error = t.throws(() => queue.admit()) as ProverError;
  t.is(error.code, status.RESOURCE_EXHAUSTED);
  first();
  first();
  t.is(queue.inFlight, 1);
  const third = queue.admit();
  t.is(queue.inFlight, 2);
  second();
  third();
  t.is(queue.inFlight, 0);
  t.throws(() => new ProofQueue(0));
  t.throws(() => new ProofQueue(1.5));
});

test('jobs run one at a time in arrival order', async (t) => {
  const queue = new ProofQueue(10);
  const order: string[] = [];
  let running = 0;
  let most = 0;
  const job = (name: string) => async () => {
    running += 1;
    most = Math.max(most, running);
    order.push(`start ${name}`);
    await new Promise((resolve) => setImmediate(resolve));
    order.push(`end ${name}`);
    running -= 1;
    return name;
  };
  const results = await Promise.all(['a', 'b', 'c', 'd'].map((name) => queue.runExclusive(job(name))));
  t.deepEqual(results, ['a', 'b', 'c', 'd']);
  t.is(most, 1);
  t.deepEqual(order, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c', 'start d', 'end d']);
  t.false(queue.busy);
});

test('an aborted waiter leaves the lane queue without running', async (t) => {
  const queue = new ProofQueue(10);
  const hold = gate();
  const first = queue.runExclusive(() => hold.promise.then(() => 'first'));
  const controller = new AbortController();
  let ran = false;
  const second = queue.runExclusive(async () => {
    ran = true;
  }, controller.signal);
  const third = queue.runExclusive(async () => 'third');
  t.is(queue.waitingForLane, 2);
  const reason = new ProverError(status.CANCELLED, 'gone');
  controller.abort(reason);
  t.is(await t.throwsAsync(second), reason);
  t.is(queue.waitingForLane, 1);
  hold.open();
  t.is(await first, 'first');
  t.is(await third, 'third');
  t.false(ran);
});

test('aborting a running job answers at once, but the next job starts only when it really ends', async (t) => {
  const queue = new ProofQueue(10);
  const hold = gate();
  const controller = new AbortController();
  let firstEnded = false;
  const first = queue.runExclusive(async () => {
    await hold.promise;
    firstEnded = true;
  }, controller.signal);
  let secondSawFirstEnded: boolean | undefined;
  const second = queue.runExclusive(async () => {
    secondSawFirstEnded = firstEnded;
  });
  controller.abort(new Error('deadline'));
  await t.throwsAsync(first, { message: 'deadline' });
  t.true(queue.busy);
  hold.open();
  await second;
  t.true(secondSawFirstEnded);
});

test('an already aborted signal never enters the lane', async (t) => {
  const queue = new ProofQueue(10);
  const controller = new AbortController();
  controller.abort(new Error('late'));
  let ran = false;
  await t.throwsAsync(
    queue.runExclusive(async () => {
      ran = true;
    }, controller.signal),
    { message: 'late' },
  );
  t.false(ran);
  t.false(queue.busy);
});
