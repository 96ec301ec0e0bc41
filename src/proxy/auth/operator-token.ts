// The operator's credential. Operator rights (operator-funded deposits, the operator's agents, the books, the
// metrics) come from a secret token sent as `Authorization: Bearer <token>`, never from where a request's
// socket is: behind a reverse proxy, an SSH tunnel or a port forward on the same host every outside caller is
// loopback. The token is kept in a file (POOL_PROXY_OPERATOR_TOKEN_FILE, `operator.token` in the data
// directory), created on first start with a random value (mode 0600, exclusively, so replicas starting
// together write one), and refused when others may read it; local clients (`pool-proxy mcp`, the commands)
// read the same file. It starts with `ppo_`, so it is never mistaken for a wallet's JWT.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';

const PREFIX = 'ppo_';
const TOKEN = /^ppo_[A-Za-z0-9_-]{43}$/;

export class OperatorTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OperatorTokenError';
  }
}

/** Whether a Bearer value is meant as the operator's token (a wallet's JWT never starts this way). */
export function isOperatorToken(value: string): boolean {
  return value.startsWith(PREFIX);
}

function read(file: string): string {
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0)
    throw new OperatorTokenError(
      `operator token file ${file} is readable by others (mode ${mode.toString(8)}); chmod 600 it`,
    );
  const token = readFileSync(file, 'utf8').trim();
  if (!TOKEN.test(token))
    throw new OperatorTokenError(`operator token file ${file} does not hold an operator token (ppo_…)`);
  return token;
}

/** The operator token in `file`, created with a fresh random token when there is none (the proxy at start). */
export function loadOperatorToken(file: string): string {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    const fd = openSync(file, 'wx', 0o600);
    try {
      writeSync(fd, `${PREFIX}${randomBytes(32).toString('base64url')}\n`);
    } finally {
      closeSync(fd);
    }
    chmodSync(file, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return read(file);
}

/** The operator token in `file` for a local client, or undefined when the file does not exist. */
export function readOperatorToken(file: string): string | undefined {
  return existsSync(file) ? read(file) : undefined;
}

/** Checks presented tokens against the operator's, in constant time. */
export class OperatorCredential {
  readonly #digest: Buffer;

  constructor(token: string) {
    this.#digest = createHash('sha256').update(token).digest();
  }

  matches(presented: string): boolean {
    return timingSafeEqual(createHash('sha256').update(presented).digest(), this.#digest);
  }
}
