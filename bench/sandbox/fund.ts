// Funds many fresh accounts through a sandbox's friendbot at once, for the sandbox benchmarks. The ledger is
// closed by hand (the benchmarks stop its timer), and friendbot answers once its grant is in a closed ledger:
// keep closing until every request is served. `closeLedger` closes one ledger of that sandbox.
import { Keypair } from '#stellar-sdk';

export async function fundMany(
  sandbox: { url: string },
  closeLedger: () => Promise<unknown>,
  n: number,
  usdc: string,
): Promise<Keypair[]> {
  const kps = Array.from({ length: n }, () => Keypair.random());
  let done = false;
  const all = Promise.all(
    kps.map((kp) => fetch(`${sandbox.url}/friendbot?addr=${kp.publicKey()}&usdc=${usdc}`)),
  ).finally(() => {
    done = true;
  });
  while (!done) {
    await closeLedger();
    await new Promise((r) => setTimeout(r, 20));
  }
  for (const r of await all) if (r.status !== 200) throw new Error(`friendbot ${r.status}`);
  return kps;
}
