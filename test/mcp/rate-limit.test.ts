// MCP over HTTP is rate-limited by the caller's wallet, not by the loopback address its tools' REST calls come
// from: one wallet's flood of /mcp calls is refused while another wallet's calls, from another client address,
// still answer. Clients are told apart by the loopback address they connect from (127.0.0.2, 127.0.0.3 …).
import type { CallToolResult, JSONRPCResultResponse } from '@modelcontextprotocol/sdk/types.js';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import type { AuthChallenge, AuthToken } from '../../src/api/types.ts';
import { jsonOf, problemOf, rawRequest, type RawResponse } from '../proxy/helpers/http.ts';
import { startTestProxy, type TestProxy } from '../proxy/helpers/proxy.ts';
import type { ToolProblem } from './helpers.ts';

let proxy: TestProxy;
test.before(async () => {
  proxy = await startTestProxy({
    // a client address may make 6 requests (then one every 100 s); a wallet 8
    POOL_PROXY_RATE_LIMIT_IP_PER_SECOND: '0.01',
    POOL_PROXY_RATE_LIMIT_IP_BURST: '6',
    POOL_PROXY_RATE_LIMIT_TOKEN_PER_SECOND: '0.01',
    POOL_PROXY_RATE_LIMIT_TOKEN_BURST: '8',
  });
});
test.after.always(async () => {
  await proxy?.close();
});

async function login(wallet: Keypair, from: string): Promise<string> {
  const challenge = await rawRequest(`${proxy.url}/api/auth/challenge?publicKey=${wallet.publicKey()}`, {
    localAddress: from,
  });
  const text = jsonOf<AuthChallenge>(challenge).challenge;
  const body = JSON.stringify({
    publicKey: wallet.publicKey(),
    challenge: text,
    signature: Buffer.from(wallet.signMessage(text)).toString('base64'),
  });
  const res = await rawRequest(`${proxy.url}/api/auth/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    localAddress: from,
  });
  if (res.status !== 200) throw new Error(`login: ${res.text}`);
  return jsonOf<AuthToken>(res).token;
}

/** One stateless MCP tools/call of pool_balance, as an MCP client sends it. */
function balanceCall(token: string, from: string, id: number): Promise<RawResponse> {
  return rawRequest(`${proxy.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'pool_balance', arguments: {} },
    }),
    localAddress: from,
  });
}

/** The problem code of a tool's refusal, or of the HTTP refusal of the /mcp request itself. */
function outcome(res: RawResponse): string {
  if (res.status !== 200) return `http ${res.status} ${problemOf(res).code}`;
  const { result } = jsonOf<JSONRPCResultResponse & { result: CallToolResult }>(res);
  if (!result.isError) return 'ok';
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error(`a refusal carries a text block: ${res.text.slice(0, 300)}`);
  return (JSON.parse(first.text) as { error: ToolProblem }).error.code;
}

test('one wallet flooding /mcp is refused by its own token bucket; another wallet still gets answers', async (t) => {
  const flooder = Keypair.random();
  const victim = Keypair.random();
  const floodToken = await login(flooder, '127.0.0.2');
  const victimToken = await login(victim, '127.0.0.3');

  // Each call costs the flooder's wallet two requests (the /mcp request, the tool's REST call) and its own
  // client address one: the wallet's 8 run out after 4 calls, the address's 6 are not the limit here.
  const seen: string[] = [];
  for (let id = 1; id <= 5; id++) seen.push(outcome(await balanceCall(floodToken, '127.0.0.4', id)));
  // a new agent has no balance yet: its tool answers not_found, which is an answer (not a rate limit)
  t.deepEqual(seen.slice(0, 4), ['not_found', 'not_found', 'not_found', 'not_found']);
  t.is(seen[4], 'http 429 rate_limited', 'the wallet is refused once its bucket is empty');
  // from another client address too: the limit follows the token's wallet, not the address
  t.is(outcome(await balanceCall(floodToken, '127.0.0.5', 9)), 'http 429 rate_limited');
  const refused = await balanceCall(floodToken, '127.0.0.5', 10);
  t.regex(problemOf(refused).detail, /this wallet/);

  // The tools' REST calls came from loopback, but they did not use up loopback's address bucket: the other
  // wallet's calls answer (four of them, more than the address burst left after its login would allow if the
  // flooder's calls had been counted there).
  for (let id = 1; id <= 4; id++) t.is(outcome(await balanceCall(victimToken, '127.0.0.3', id)), 'not_found');
});

test('a made-up internal-call marker is counted like any request', async (t) => {
  const headers = { 'x-pool-internal-call': 'x'.repeat(43) };
  const answers: number[] = [];
  for (let i = 0; i < 7; i++)
    answers.push(
      (await rawRequest(`${proxy.url}/health/live`, { headers, localAddress: '127.0.0.6' })).status,
    );
  t.deepEqual(answers, [200, 200, 200, 200, 200, 200, 429]);
});
