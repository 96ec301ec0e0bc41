// The addresses `pool-proxy start` listens on, each with the flag or variable that moves it, declared once for
// the command's options and for the check that runs before anything else: `preflightStart` parses only these
// options and binds each address for a moment, so a taken port is reported at once — naming the port, the part
// that needs it and how to move it — instead of after the build, the sandbox's genesis and the prover's key.
// This module stays light (no Stellar SDK, no prover): bin/pool-proxy.js runs it before loading the CLI.
import type { Command } from 'commander';
import {
  bindError,
  DEFAULT_PROVER_LISTEN,
  DEFAULT_PROXY_HOST,
  DEFAULT_PROXY_PORT,
  formatAddress,
  type ListenAddress,
  parseListen,
} from '../../listen.ts';
import { createLogger } from '../../proxy/util/logger.ts';

type Env = Record<string, string | undefined>;

export interface StartListener {
  /** The option's name in the parsed options (`opts.sandbox`). */
  key: 'sandbox' | 'prover' | 'facilitator' | 'demo';
  flag: string;
  env: string;
  fallback: string;
  description: string;
  /** The part that listens there, for messages. */
  part: string;
  /** Whether `start` runs this part with this environment (it is skipped when an external one is named). */
  runs: (env: Env) => boolean;
}

const embeddedLedger = (env: Env) => !env.POOL_PROXY_RPC_URL;

export const START_LISTENERS: readonly StartListener[] = [
  {
    key: 'sandbox',
    flag: '--sandbox',
    env: 'POOL_PROXY_SANDBOX_LISTEN',
    fallback: '127.0.0.1:8000',
    description: 'embedded sandbox address',
    part: 'the embedded sandbox ledger',
    runs: embeddedLedger,
  },
  {
    key: 'prover',
    flag: '--prover',
    env: 'POOL_PROXY_PROVER_LISTEN',
    fallback: DEFAULT_PROVER_LISTEN,
    description: 'embedded prover daemon address',
    part: 'the prover daemon',
    runs: (env) => !env.POOL_PROXY_PROVER_ADDRESSES,
  },
  {
    key: 'facilitator',
    flag: '--facilitator',
    env: 'POOL_PROXY_FACILITATOR_LISTEN',
    fallback: '127.0.0.1:8402',
    description: 'local x402 facilitator address (with the embedded sandbox)',
    part: 'the local x402 facilitator',
    runs: embeddedLedger,
  },
  {
    key: 'demo',
    flag: '--demo',
    env: 'POOL_PROXY_DEMO_LISTEN',
    fallback: '127.0.0.1:8403',
    description: 'demo paid service address (with the embedded sandbox)',
    part: 'the demo paid service',
    runs: embeddedLedger,
  },
];

export type ListenOptions = Record<StartListener['key'], string>;

/** Declares the listen options on `command`, defaults from the environment. */
export function addListenOptions(command: Command, env: Env = process.env): Command {
  for (const l of START_LISTENERS)
    command.option(`${l.flag} <host:port>`, `${l.description} (or ${l.env})`, env[l.env] ?? l.fallback);
  return command;
}

interface PlannedListen {
  address: ListenAddress;
  part: string;
  /** How to move it, for messages. */
  movedBy: string;
}

/** Every address `start` will bind with these options and environment; malformed ones throw, naming the flag. */
export function plannedListens(opts: ListenOptions, env: Env): PlannedListen[] {
  const planned = START_LISTENERS.filter((l) => l.runs(env)).map((l) => ({
    address: parseListen(opts[l.key], l.flag),
    part: l.part,
    movedBy: `${l.flag} HOST:PORT (or ${l.env})`,
  }));
  // The proxy's own address; a malformed value is left to the proxy's configuration check, which names it.
  const portText = env.POOL_PROXY_PORT ?? String(DEFAULT_PROXY_PORT);
  if (/^\d{1,5}$/.test(portText) && Number(portText) <= 65535)
    planned.push({
      address: { host: env.POOL_PROXY_HOST || DEFAULT_PROXY_HOST, port: Number(portText) },
      part: 'the proxy (REST API, MCP and the wallet page)',
      movedBy: 'POOL_PROXY_PORT (and POOL_PROXY_HOST)',
    });
  return planned;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '']);

function overlaps(a: ListenAddress, b: ListenAddress): boolean {
  return a.port === b.port && (a.host === b.host || WILDCARDS.has(a.host) || WILDCARDS.has(b.host));
}

/** One sentence per address that cannot be bound (or is asked for twice); empty when all are free. */
export async function listenProblems(planned: PlannedListen[]): Promise<string[]> {
  const problems: string[] = [];
  planned.forEach((p, i) => {
    const twin = planned.slice(0, i).find((q) => p.address.port !== 0 && overlaps(p.address, q.address));
    if (twin)
      problems.push(
        `${formatAddress(p.address.host, p.address.port)} is asked for twice: by ${twin.part} and by ${p.part}; ` +
          `move one with ${p.movedBy}`,
      );
  });
  const errors = await Promise.all(planned.map((p) => bindError(p.address)));
  planned.forEach((p, i) => {
    const code = errors[i];
    if (code === undefined) return;
    const where = formatAddress(p.address.host, p.address.port);
    const why =
      code === 'EADDRINUSE'
        ? 'is already in use'
        : code === 'EADDRNOTAVAIL'
          ? 'is not an address of this machine'
          : code === 'EACCES'
            ? 'may not be bound by this user'
            : `cannot be bound (${code})`;
    problems.push(`${where} ${why}, so ${p.part} cannot listen there; move it with ${p.movedBy}`);
  });
  return problems;
}

/** The value `start` will see for `flag` in `args` (`--flag value` or `--flag=value`; the last one wins). */
function flagValue(args: string[], flag: string): string | undefined {
  let value: string | undefined;
  args.forEach((arg, i) => {
    if (arg === flag) value = args[i + 1];
    else if (arg.startsWith(`${flag}=`)) value = arg.slice(flag.length + 1);
  });
  return value;
}

/**
 * Runs before the CLI loads (bin/pool-proxy.js): reads the listen options of `start` from `args` and, when an
 * address is malformed, asked for twice or cannot be bound, logs why and exits 1 having done nothing else.
 */
export async function preflightStart(args: string[], env: Env = process.env): Promise<void> {
  if (args.includes('--help') || args.includes('-h')) return;
  const opts = Object.fromEntries(
    START_LISTENERS.map((l) => [l.key, flagValue(args, l.flag) ?? env[l.env] ?? l.fallback]),
  ) as ListenOptions;
  let problems: string[];
  try {
    problems = await listenProblems(plannedListens(opts, env));
  } catch (error) {
    problems = [(error as Error).message];
  }
  if (problems.length === 0) return;
  const logger = createLogger();
  for (const problem of problems) logger.log('error', `pool-proxy start: ${problem}`);
  process.exit(1);
}
