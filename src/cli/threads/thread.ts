// Running a part of `pool-proxy start` on its own thread: the embedded sandbox ledger and the local x402
// pair (facilitator and demo service) each get a worker thread, so that the ledger, the services and the
// proxy use both cores instead of taking turns on one event loop. A part only talks to the others over
// loopback HTTP, as it would across machines, so it needs nothing from the main thread but its options:
// the worker starts it from `workerData`, answers with a plain description of what it started (URLs,
// accounts), forwards log lines, and closes it when told. The worker loads the part's module as the main
// thread runs (compiled, or TypeScript through tsx: src/worker-module.ts).
//
// snarkjs (the sandbox's Groth16 verifier contract) loads ffjavascript, which loads the `web-worker`
// package; loaded on any thread but the main one, that package assumes the thread is one of its own web
// workers, rewires the thread's globals and tries to load a script from workerData. Our threads use
// single-threaded curves only, so before anything is imported the worker's module cache gets, in its place,
// a Worker class that refuses to start.
import { createRequire } from 'node:module';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { importInWorker } from '../../worker-module.ts';

export interface ThreadLogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields?: Record<string, unknown>;
}

type ToMain<I> =
  | { type: 'ready'; info: I }
  | { type: 'failed'; message: string }
  | { type: 'log'; line: ThreadLogLine }
  | { type: 'closed' };

export interface ThreadHandle<I> {
  /** what the part reported once it was up */
  info: I;
  /** closes the part (its servers, its store) and ends the thread */
  close(): Promise<void>;
  /** how busy the thread's event loop has been (since `since`, when given) */
  utilization(since?: EventLoopUtilization): EventLoopUtilization;
}

export interface ThreadOptions {
  onLog?: (line: ThreadLogLine) => void;
  /** the thread ended without being closed (a crash): called once with the reason */
  onExit?: (reason: string) => void;
}

function webWorkerPath(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve('web-worker');
  } catch {
    return undefined;
  }
}

/** The worker's first lines: no `web-worker` takeover (see above), then the part's module. */
function bootScript(entry: URL): string {
  const ww = webWorkerPath();
  const guard = ww
    ? `require.cache[${JSON.stringify(ww)}] = { id: ${JSON.stringify(ww)}, filename: ${JSON.stringify(ww)}, loaded: true, ` +
      `exports: class { constructor() { throw new Error('no web workers on this thread'); } } };\n`
    : '';
  return `${guard}${importInWorker(entry)}`;
}

interface ThreadData {
  /** which part the thread serves: a module imported on some other worker thread serves nothing */
  part: string;
  data: unknown;
}

/** Starts the module at `entry` (which calls serveThread with the same `part`) on a worker thread. */
export function startThread<I>(
  entry: URL,
  part: string,
  data: unknown,
  opts: ThreadOptions = {},
): Promise<ThreadHandle<I>> {
  const worker = new Worker(bootScript(entry), {
    eval: true,
    workerData: { part, data } satisfies ThreadData,
  });
  let closing = false;
  let closed: (() => void) | undefined;
  return new Promise((resolve, reject) => {
    let started = false;
    worker.on('message', (m: ToMain<I>) => {
      if (m.type === 'log') opts.onLog?.(m.line);
      else if (m.type === 'failed') reject(new Error(m.message));
      else if (m.type === 'closed') closed?.();
      else if (m.type === 'ready') {
        started = true;
        resolve({
          info: m.info,
          utilization: (since) => worker.performance.eventLoopUtilization(since),
          close: () => {
            if (closing) return Promise.resolve();
            closing = true;
            return new Promise<void>((done) => {
              closed = done;
              worker.once('exit', () => done());
              worker.postMessage({ type: 'close' });
            });
          },
        });
      }
    });
    worker.on('error', (e) => {
      if (!started) reject(e);
      else if (!closing) opts.onExit?.(e.message);
    });
    worker.on('exit', (code) => {
      if (!started) reject(new Error(`the thread ended (exit code ${code}) before it started`));
      else if (!closing) opts.onExit?.(`exit code ${code}`);
    });
  });
}

/**
 * In a worker started for `part`: starts it from the thread's data, reports it, and closes it when the main
 * thread asks. Anywhere else (the main thread, another part's worker) it does nothing.
 */
export function serveThread<D, I>(
  part: string,
  start: (data: D, log: (line: ThreadLogLine) => void) => Promise<{ info: I; close(): Promise<void> }>,
): void {
  const port = parentPort;
  const td = workerData as ThreadData | undefined;
  if (!port || td?.part !== part) return;
  const post = (m: ToMain<I>) => port.postMessage(m);
  start(td.data as D, (line) => post({ type: 'log', line })).then(
    (part) => {
      port.on('message', (m: { type?: string }) => {
        if (m?.type !== 'close') return;
        part.close().finally(() => {
          post({ type: 'closed' });
          port.close();
        });
      });
      post({ type: 'ready', info: part.info });
    },
    (e: unknown) => {
      post({ type: 'failed', message: (e as Error)?.message ?? String(e) });
      port.close();
    },
  );
}
