// The service's logger (pino): JSON lines on stdout, one object per line with an ISO time, a level
// label and `msg`; coloured, human-readable lines (pino-pretty) when stdout is a terminal. Callers use
// the small `Logger` interface (`log(level, message, fields)`, `child(bindings)`), never pino itself.
// What must never be logged — secrets, tokens, JWTs, signatures, notes, or an amount next to an agent —
// is also enforced here as a last line of defence: such fields are replaced by "[redacted]", and an
// `amount` in the same line as an agent or wallet is dropped.
import pino, { type DestinationStream, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
  /** A logger whose every line also carries `bindings` (e.g. the request id). */
  child(bindings: Record<string, unknown>): Logger;
}

/** Field names whose values are never written, at the top level or one level down. */
const SECRET_FIELDS = [
  'authorization',
  'token',
  'jwt',
  'signature',
  'secret',
  'seed',
  'masterKey',
  'password',
  'challenge',
  'note',
  'notes',
  'signedTransactionXDR',
];
/** Fields that identify an agent or its owner: an `amount` is never logged next to one of them. */
const AGENT_FIELDS = ['agentId', 'agent', 'owner', 'wallet'];

export interface LoggerOptions {
  /** Lowest level written (default: POOL_PROXY_LOG_LEVEL, else info). */
  level?: LogLevel;
  /** Human-readable coloured lines instead of JSON (default: when stdout is a terminal). */
  pretty?: boolean;
  /** Where JSON lines go (default stdout). */
  write?: (line: string) => void;
}

export function defaultLogLevel(env: Record<string, string | undefined> = process.env): LogLevel {
  const wanted = env.POOL_PROXY_LOG_LEVEL?.trim().toLowerCase();
  return wanted && (LOG_LEVELS as string[]).includes(wanted) ? (wanted as LogLevel) : 'info';
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const usePretty = options.pretty ?? (options.write === undefined && process.stdout.isTTY === true);
  let destination: DestinationStream;
  if (usePretty) {
    destination = pretty({
      colorize: true,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      singleLine: true,
    });
  } else if (options.write) {
    const write = options.write;
    destination = { write: (line: string) => write(line) };
  } else {
    destination = pino.destination({ dest: 1, sync: true });
  }
  const instance = pino(
    {
      level: options.level ?? defaultLogLevel(),
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`)],
        censor: '[redacted]',
      },
      formatters: {
        // pretty output colours numeric levels; JSON lines carry the label people search for.
        ...(usePretty ? {} : { level: (label: string) => ({ level: label }) }),
      },
    },
    destination,
  );
  return wrap(instance, false);
}

const namesAgent = (fields: Record<string, unknown>) => AGENT_FIELDS.some((field) => field in fields);

/** `agentBound`: an agent, owner or wallet is among the bindings of this logger (or its parents). */
function wrap(instance: PinoLogger, agentBound: boolean): Logger {
  return {
    log(level, message, fields) {
      if (fields === undefined) {
        instance[level](message);
        return;
      }
      if ('amount' in fields && (agentBound || namesAgent(fields))) {
        const { amount: _dropped, ...rest } = fields;
        instance[level](rest, message);
        return;
      }
      instance[level](fields, message);
    },
    child(bindings) {
      return wrap(instance.child(bindings), agentBound || namesAgent(bindings));
    },
  };
}

/** JSON lines at `minimum` and above, to `write` (default stdout): for tests and embedding. */
export function jsonLogger(
  minimum: LogLevel = 'info',
  write: (line: string) => void = (l) => process.stdout.write(l),
): Logger {
  return createLogger({ level: minimum, write, pretty: false });
}

export const silentLogger: Logger = {
  log() {},
  child() {
    return silentLogger;
  },
};
