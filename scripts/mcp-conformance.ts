// `npx tsx scripts/mcp-conformance.ts <conformance dist/index.js> [scenario…]`: runs the official MCP conformance
// suite's server scenarios (@modelcontextprotocol/conformance, installed anywhere: it is not a dependency) against
// a real proxy's /mcp on loopback. The suite cannot log in with a wallet, so it talks to a forwarder that adds a
// wallet's Bearer token and passes every other header (Host, Origin) unchanged; the forwarder's origin is the
// proxy's POOL_PROXY_MCP_ALLOWED_ORIGINS, as a reverse proxy's would be. On Node 20 the suite runs with
// scripts/conformance/node20-fs.mjs (it needs fs.globSync, Node >= 22). Default scenarios: what the server offers.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Keypair } from '#stellar-sdk';
import { PoolApi } from '../src/api/client.ts';
import { loadConfig } from '../src/proxy/config.ts';
import { startProxy } from '../src/proxy/server.ts';
import { silentLogger } from '../src/proxy/util/logger.ts';

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];
const [cli, ...asked] = process.argv.slice(2);
if (cli === undefined)
  throw new Error('usage: mcp-conformance.ts <path of the conformance dist/index.js> [scenario…]');
const scenarios = asked.length > 0 ? asked : SCENARIOS;

let target = '';
let token = '';
const forwarder = createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const upstream = request(`${target}${req.url}`, { method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.writeHead(502).end());
  req.pipe(upstream);
});
forwarder.listen(0, '127.0.0.1');
await once(forwarder, 'listening');
const front = `http://127.0.0.1:${(forwarder.address() as AddressInfo).port}`;

const proxy = await startProxy(
  loadConfig({
    POOL_PROXY_PORT: '0',
    POOL_PROXY_DATA_DIR: mkdtempSync(join(tmpdir(), 'pp-conformance-')),
    POOL_PROXY_MASTER_KEY: randomBytes(32).toString('hex'),
    POOL_PROXY_RPC_URL: 'http://127.0.0.1:9/rpc',
    POOL_PROXY_MCP_ALLOWED_ORIGINS: front,
  }),
  { logger: silentLogger },
);
target = proxy.url;
const wallet = Keypair.random();
const api = new PoolApi({ baseUrl: proxy.url });
const { challenge } = await api.challenge(wallet.publicKey());
const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
token = (await api.verify({ publicKey: wallet.publicKey(), challenge, signature })).token;

let failed = 0;
const hook = new URL('./conformance/node20-fs.mjs', import.meta.url).pathname;
for (const scenario of scenarios) {
  // Asynchronously: the proxy and the forwarder answer from this process while the suite runs.
  const child = spawn(
    process.execPath,
    ['--import', hook, cli, 'server', '--url', `${front}/mcp`, '--scenario', scenario],
    { cwd: mkdtempSync(join(tmpdir(), 'pp-conformance-results-')), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [status] = (await once(child, 'exit')) as [number | null];
  process.stdout.write(`=== ${scenario} (exit ${status})\n${output}\n`);
  const run = { status };
  if (run.status !== 0) failed++;
}
await proxy.close();
forwarder.close();
console.log(`${scenarios.length - failed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
