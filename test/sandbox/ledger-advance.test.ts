// The sandbox-only ledger advance: `POST /sandbox/advance?ledgers=N` exists only when the sandbox was started
// with `ledgerControl`, closes the next ledger N sequence numbers on, refuses nonsense, and getLedgers pages
// across the gap it leaves.
import test from 'ava';
import { rpc } from '#stellar-sdk';
import { type NetworkDefinition, Sandbox } from '../../src/sandbox/index.ts';

const network: NetworkDefinition = { genesis: () => ({}), deploy: async () => ({}) };

const advance = (base: string, ledgers: string) =>
  fetch(`${base}/sandbox/advance?ledgers=${ledgers}`, { method: 'POST' });

test('POST /sandbox/advance moves the ledger sequence on, when the sandbox allows it', async (t) => {
  const sandbox = await Sandbox.start({ network, port: 0, ledgerMs: 50, ledgerControl: true });
  t.teardown(() => sandbox.close());
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  const before = (await server.getLatestLedger()).sequence;
  const res = await advance(sandbox.url, '100000');
  t.is(res.status, 200);
  const { sequence } = (await res.json()) as { sequence: number };
  t.true(sequence >= before + 100_000);
  t.true((await server.getLatestLedger()).sequence >= sequence);
  // getLedgers from inside the gap steps over it to the advanced ledger
  const page = await server.getLedgers({ startLedger: sequence - 1, pagination: { limit: 2 } });
  t.is(page.ledgers[0]?.sequence, sequence);

  for (const bad of ['0', '-5', 'x', '', '99999999999', '10000001']) {
    const refused = await advance(sandbox.url, bad);
    t.is(refused.status, 400, bad);
  }
});

test('without ledgerControl the route does not exist', async (t) => {
  const sandbox = await Sandbox.start({ network, port: 0, ledgerMs: 50 });
  t.teardown(() => sandbox.close());
  const before = sandbox.chain.latest.sequence;
  t.is((await advance(sandbox.url, '1000')).status, 404);
  t.true(sandbox.chain.latest.sequence < before + 1000);
});
