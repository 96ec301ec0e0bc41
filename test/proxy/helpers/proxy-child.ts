// Runs one proxy in its own process (configuration from the environment) so a test can kill it hard.
// Prints {"url": …} on stdout once the pool side is connected.
import { loadConfig } from '../../../src/proxy/config.ts';
import { startProxy } from '../../../src/proxy/server.ts';
import { silentLogger } from '../../../src/proxy/util/logger.ts';

const proxy = await startProxy(loadConfig(process.env), { logger: silentLogger });
await proxy.ready;
process.stdout.write(`${JSON.stringify({ url: proxy.url })}\n`);
