// Parts of `pool-proxy start` on worker threads (src/cli/threads/thread.ts), with a small part of our own: its
// description comes back, its log lines reach the main thread, closing ends the thread, a part that fails to
// start rejects with its message, a part that dies afterwards is reported once, and snarkjs loads on such a
// thread without taking it over.
import test from 'ava';
import { startThread, type ThreadLogLine } from '../../src/cli/threads/thread.ts';

const PART = new URL('./fixtures/thread-part.ts', import.meta.url);

test('a part starts, describes itself, forwards its log lines and closes', async (t) => {
  const lines: ThreadLogLine[] = [];
  const exits: string[] = [];
  const part = await startThread<{ echo: string; snarkjs: boolean; globalsUntouched: boolean }>(
    PART,
    'test-part',
    { mode: 'ok', echo: 'hello' },
    { onLog: (l) => lines.push(l), onExit: (r) => exits.push(r) },
  );
  t.is(part.info.echo, 'hello');
  t.true(part.info.snarkjs, 'snarkjs works on the thread');
  t.true(part.info.globalsUntouched, 'web-worker did not take the thread over');
  t.deepEqual(lines, [{ level: 'info', message: 'part started', fields: { echo: 'hello' } }]);
  t.true(part.utilization().idle >= 0);
  await part.close();
  await part.close(); // a second close is harmless
  t.deepEqual(exits, [], 'a requested close is not a crash');
});

test('a part that cannot start rejects with its own message', async (t) => {
  await t.throwsAsync(startThread(PART, 'test-part', { mode: 'fail' }), {
    message: 'the part could not start',
  });
});

test('a part that dies after starting is reported once', async (t) => {
  const exits: string[] = [];
  let reported: () => void = () => {};
  const once = new Promise<void>((r) => (reported = r));
  await startThread(
    PART,
    'test-part',
    { mode: 'die' },
    {
      onExit: (reason) => {
        exits.push(reason);
        reported();
      },
    },
  );
  await once;
  await new Promise((r) => setTimeout(r, 100));
  t.deepEqual(exits, ['exit code 3']);
});

test('a module started for another part serves nothing', async (t) => {
  await t.throwsAsync(startThread(PART, 'another-part', { mode: 'ok' }), {
    message: /before it started/,
  });
});
