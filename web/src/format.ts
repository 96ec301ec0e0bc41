// How the page writes amounts, addresses, times and transactions: USDC amounts trimmed to what matters (at
// least two decimals), addresses and hashes shortened to their ends (G…XXXX), local date-times, and the public
// explorer's page of a transaction on the networks that have one.

/** "G" + the last four characters for a Stellar address; the first and last six for other long ids. */
export function shortAddress(value: string): string {
  if (/^[GC][A-Z2-7]{55}$/.test(value)) return `${value.slice(0, 1)}…${value.slice(-4)}`;
  return value.length > 16 ? `${value.slice(0, 6)}…${value.slice(-6)}` : value;
}

/** "7.4900000" → "7.49"; "0.0000001" stays; anything that is not a decimal is returned as it is. */
export function usdc(amount: string): string {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(amount.trim());
  if (!m) return amount;
  const decimals = (m[2] ?? '').replace(/0+$/, '').padEnd(2, '0');
  return `${m[1]}.${decimals}`;
}

export function dateTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** The public explorer's page of transaction `hash` on x402 network `network`; none for local ledgers. */
export function transactionUrl(network: string, hash: string): string | undefined {
  const explorer: Record<string, string> = {
    'stellar:testnet': 'https://stellar.expert/explorer/testnet/tx/',
    'stellar:pubnet': 'https://stellar.expert/explorer/public/tx/',
  };
  const base = explorer[network];
  return base && /^[0-9a-f]{64}$/i.test(hash) ? `${base}${hash.toLowerCase()}` : undefined;
}
