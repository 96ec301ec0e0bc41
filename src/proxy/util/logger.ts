// JSON-lines logger: one object per line, easy to ship and grep. Never log secrets, notes or amounts
// tied to agents: the store is encrypted for a reason.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function jsonLogger(
  minimum: LogLevel = 'info',
  write: (line: string) => void = (l) => process.stdout.write(l),
): Logger {
  return {
    log(level, message, fields = {}) {
      if (ORDER[level] < ORDER[minimum]) return;
      write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
    },
  };
}

export const silentLogger: Logger = { log() {} };
