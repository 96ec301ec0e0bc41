// Restarts reuse their ports. A listening port inside the range Linux draws outgoing connections' local
// ports from can be held by any process's connection, and then a listen on it fails with EADDRINUSE: shown
// here with a real connection and a real prover daemon, which is why every default port of the service
// lies below that range. And a prover daemon stopped gracefully while a client is connected frees its
// port at once: the next daemon binds the same port right away, several times over.
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { type AddressInfo, connect, createServer } from 'node:net';
import test from 'ava';
import { DEFAULT_PROVER_LISTEN, freeLoopbackPort, parseListen } from '../../src/listen.ts';
import { ProverClient } from '../../src/prover/client.ts';
import { startProverDaemon } from '../../src/prover/daemon/server.ts';
import { loadConfig } from '../../src/proxy/config.ts';
import { CIRCUITS_DIR } from '../proxy/helpers/stack.ts';

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    return [Number(low), Number(high)];
  } catch {
    return [32768, 60999]; // Linux's default
  }
}

const daemonOn = (port: number) =>
  startProverDaemon({
    listen: `127.0.0.1:${port}`,
    circuitsDir: CIRCUITS_DIR,
    engine: 'native',
    witnessWorkers: 1,
  });

test('a connection whose local port is P keeps a daemon from listening on P: defaults stay below the ephemeral range', async (t) => {
  const target = createServer((socket) => socket.on('error', () => {})).listen(0, '127.0.0.1');
  await once(target, 'listening');
  t.teardown(() => target.close());
  // An ordinary outgoing connection: the kernel picks its local port from the ephemeral range.
  const client = connect({ host: '127.0.0.1', port: (target.address() as AddressInfo).port });
  await once(client, 'connect');
  t.teardown(() => client.destroy());
  const port = client.localPort!;
  const [low, high] = ephemeralRange();
  t.true(port >= low && port <= high, `local port ${port} in ${low}-${high}`);
  const error = await t.throwsAsync(daemonOn(port));
  t.regex(String(error?.message), /EADDRINUSE/);

  const defaults = {
    prover: parseListen(DEFAULT_PROVER_LISTEN).port,
    proxyProverAddress: parseListen(loadConfig({}).prover.addresses[0]!).port,
    proxy: loadConfig({}).port,
    sandbox: new URL(loadConfig({}).ledger.rpcUrl).port,
  };
  for (const [name, value] of Object.entries(defaults))
    t.true(Number(value) < low, `${name} default port ${value} is below ${low}`);
});

test('a daemon stopped gracefully with a client connected frees its port for the next one at once', async (t) => {
  const port = await freeLoopbackPort();
  for (let round = 0; round < 3; round++) {
    const daemon = await daemonOn(port);
    await daemon.ready;
    const client = await ProverClient.connect({ addresses: [`127.0.0.1:${port}`], deadlineMs: 30_000 });
    t.true((await client.listCircuits()).length > 0, `round ${round}`);
    // graceful stop while the client's connection is still open
    await daemon.stop();
    client.close();
  }
});
