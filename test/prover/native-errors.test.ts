// Failures inside the native thread pool come back as rejected promises with a code, and the process
// and the pool live on: testOps.failInPool throws from one of 64 nested pool tasks (a coded prover error,
// a plain C++ exception, an allocation failure). Before the pool kept exceptions, such a task called
// std::terminate and took Node down with it. nativeError maps what the addon rejects with by its code.
import test from 'ava';
import { addon } from '../../src/prover/native-addon.ts';
import { NativeProverError, nativeError } from '../../src/prover/native-error.ts';

test('a throwing pool task rejects with its code, section and index; the pool keeps working', async (t) => {
  const coded = await t.throwsAsync(addon.testOps.failInPool('coded'), {
    message: 'task 37 failed on purpose',
  });
  t.like(coded, { code: 'test_fault', section: 'task', index: 37 });
  t.like(nativeError(coded), { code: 'test_fault', section: 'task', index: 37 });
  t.true(nativeError(coded) instanceof NativeProverError);
  // Still alive, and every task of a good call runs.
  t.is(await addon.testOps.failInPool('none'), 64);
});

test('a plain C++ exception is code internal, an allocation failure out_of_memory', async (t) => {
  t.like(await t.throwsAsync(addon.testOps.failInPool('plain'), { message: 'task 37 failed on purpose' }), {
    code: 'internal',
  });
  t.like(await t.throwsAsync(addon.testOps.failInPool('alloc'), { message: 'out of memory' }), {
    code: 'out_of_memory',
  });
  // Failures one after another and side by side leave nothing behind.
  const results = await Promise.allSettled([
    addon.testOps.failInPool('coded'),
    addon.testOps.failInPool('none'),
    addon.testOps.failInPool('plain'),
    addon.testOps.failInPool('none'),
  ]);
  t.deepEqual(
    results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as { code: string }).code)),
    ['test_fault', 64, 'internal', 64],
  );
});

test('bad arguments to the hook are a TypeError with code bad_argument', (t) => {
  const error = t.throws(() => addon.testOps.failInPool('sideways' as 'none'), { instanceOf: TypeError });
  t.is((error as Error & { code: string }).code, 'bad_argument');
});

test('nativeError keeps known codes and calls anything else internal', (t) => {
  t.like(nativeError(Object.assign(new Error('x'), { code: 'key_changed', section: 'coefficients' })), {
    code: 'key_changed',
    section: 'coefficients',
    message: 'x',
  });
  t.like(nativeError(Object.assign(new Error('y'), { code: 'EPERM' })), { code: 'internal', message: 'y' });
  t.like(nativeError('z'), { code: 'internal', message: 'z' });
});
