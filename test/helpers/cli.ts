// The pool-proxy command line as a child process, for tests that drive it from outside: stdout and
// stderr collected as they come, a wait for a pattern in them that fails at once if the process exits
// first, and a stop that sends SIGTERM and then, if the process lingers, SIGKILL.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../bin/pool-proxy.js', import.meta.url));

export interface CliRun {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved as they arrived. */
  output(): string;
  /** stdout alone (the JSON log lines, when stdout is not a terminal). */
  stdout(): string;
  stderr(): string;
  /** The exit code (null when a signal ended the process). */
  exited: Promise<number | null>;
  /** The first match of `pattern` in the output, waiting up to `ms` for it. */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  /** SIGTERM, SIGKILL after `graceMs` if still running; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** Runs `pool-proxy ...args`. `env` adds to the inherited environment; an undefined value removes a variable. */
export function runCli(args: string[], env: Record<string, string | undefined> = {}): CliRun {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  const child = spawn(process.execPath, [CLI, ...args], { env: merged });
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    output += d;
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
    stderr += d;
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    output: () => output,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async waitFor(pattern, ms = 5 * 60_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const match = pattern.exec(output);
        if (match) return match;
        if (!running()) throw new Error(`pool-proxy ${args[0]} exited before ${pattern}:\n${output}`);
        if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop(graceMs = 10_000) {
      if (!running()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface StartOptions {
  dataDir: string;
  /** host:port of the embedded sandbox ledger */
  sandbox: string;
  /** host:port of the prover daemon */
  prover: string;
  /** the sandbox's ledger close interval */
  ledgerMs: number;
  /** host:port of the local x402 facilitator (default: any free loopback port) */
  facilitator?: string;
  /** host:port of the demo service (default: any free loopback port) */
  demo?: string;
  /** further flags, after the ones above */
  extra?: string[];
}

/** Runs `pool-proxy start` with the given addresses: the one place tests write its argument list. */
export function runStart(options: StartOptions, env: Record<string, string | undefined> = {}): CliRun {
  const args = [
    'start',
    '--data-dir',
    options.dataDir,
    '--sandbox',
    options.sandbox,
    '--prover',
    options.prover,
    '--ledger-ms',
    String(options.ledgerMs),
    ...(options.extra ?? []),
    '--facilitator',
    options.facilitator ?? '127.0.0.1:0',
    '--demo',
    options.demo ?? '127.0.0.1:0',
  ];
  return runCli(args, env);
}
