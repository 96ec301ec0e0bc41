// Parsers of the CLI's flag values, each failing with an error that names the flag (kept apart from the
// commands so that a command loads only what it runs).

/** An http(s) URL, or a clear error naming the flag. */
export function parseRpcUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--rpc-url must be an http(s) URL, got ${text}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`--rpc-url must be an http(s) URL, got ${text}`);
  return url.toString();
}

/** An integer flag within [min, max], or a clear error naming it. */
export function parseIntFlag(name: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max)
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${text}`);
  return n;
}

/** A network passphrase as given on the command line: printable text of 1 to 256 characters. */
export function parsePassphrase(text: string): string {
  if (!/^[\x20-\x7e]{1,256}$/.test(text) || text.trim() !== text) {
    throw new Error(
      '--network-passphrase must be 1 to 256 printable characters without leading or trailing spaces',
    );
  }
  return text;
}

/** Help of `--tree-capacity` (start, contracts deploy). */
export const TREE_CAPACITY_HELP =
  'leaves one pool commitment tree takes before the pool opens the next: a power of two from 4 to 1048576 ' +
  '(small values fill trees in seconds, for tests)';

/** `--tree-capacity`: a power of two from 4 to 2^20 (the circuit's tree depth), or a clear error. */
export function parseTreeCapacity(text: string): number {
  const n = Number(text);
  if (!/^\d{1,8}$/.test(text) || n < 4 || n > 2 ** 20 || (n & (n - 1)) !== 0)
    throw new Error(`--tree-capacity must be a power of two from 4 to 1048576, got ${text}`);
  return n;
}
