// The proxy under measurement, in its own process (configuration from the environment).
// Prints {"url": …} on stdout once the ledger and prover are connected.
import { loadConfig } from '../../src/proxy/config.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { silentLogger } from '../../src/proxy/util/logger.ts';

const proxy = await startProxy(loadConfig(process.env), { logger: silentLogger });
await proxy.ready;
process.stdout.write(`${JSON.stringify({ url: proxy.url })}\n`);
