// USDC amounts: bigint stroops (7 decimals) inside the proxy, decimal strings outside.
// Parsing is strict on purpose: an amount is money, so anything ambiguous is refused, not guessed.

export const STROOPS_PER_UNIT = 10_000_000n;
export const AMOUNT_DECIMALS = 7;

// Integer part without leading zeros (or a single 0), then optionally 1–7 fractional digits.
// A bare integer is accepted because the MCP-style deposit sends one (interface spec, "amount").
const AMOUNT_PATTERN = /^(0|[1-9][0-9]{0,17})(?:\.([0-9]{1,7}))?$/;

export class AmountError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AmountError';
  }
}

/** Parses a decimal USDC string into stroops; refuses non-strings, zero, signs, exponents, >7 decimals, > max. */
export function parseAmount(value: unknown, max: bigint): bigint {
  if (typeof value !== 'string') throw new AmountError('amount must be a string such as "1.5000000"');
  const match = AMOUNT_PATTERN.exec(value);
  if (!match) {
    throw new AmountError(
      `amount "${value.slice(0, 40)}" is not a decimal USDC amount (digits, optional "." and at most ${AMOUNT_DECIMALS} decimals)`,
    );
  }
  const fraction = (match[2] ?? '').padEnd(AMOUNT_DECIMALS, '0');
  const stroops = BigInt(match[1]) * STROOPS_PER_UNIT + BigInt(fraction);
  if (stroops <= 0n) throw new AmountError('amount must be greater than zero');
  if (stroops > max) throw new AmountError(`amount ${value} exceeds the maximum of ${formatAmount(max)}`);
  return stroops;
}

/** Formats stroops as `<int>.<7 digits>`, the spec's amount format. */
export function formatAmount(stroops: bigint): string {
  const negative = stroops < 0n;
  const abs = negative ? -stroops : stroops;
  const whole = abs / STROOPS_PER_UNIT;
  const fraction = (abs % STROOPS_PER_UNIT).toString().padStart(AMOUNT_DECIMALS, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}

/** Parses a positive amount given in configuration (operator input), naming the setting on error. */
export function parseConfigAmount(value: string, name: string): bigint {
  try {
    return parseAmount(value, 2n ** 127n);
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}`);
  }
}
