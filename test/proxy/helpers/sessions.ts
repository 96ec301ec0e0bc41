// Sessions before a store recovery, and the check that every one of them ended after it: a token its wallet
// logged out, a token it kept, and a login challenge it never used; on REST (through PoolApi) and on /mcp alike.
import { Keypair } from '#stellar-sdk';
import type { ExecutionContext } from 'ava';
import { PoolApi, refused, walletApi } from './api.ts';
import { postJson } from './http.ts';

export interface Sessions {
  wallet: Keypair;
  loggedOut: string;
  kept: string;
  /** a challenge issued and never answered */
  challenge: string;
}

async function challengeOf(url: string, wallet: Keypair): Promise<string> {
  return (await new PoolApi({ baseUrl: url }).challenge(wallet.publicKey())).challenge;
}

function verify(url: string, wallet: Keypair, challenge: string) {
  return new PoolApi({ baseUrl: url }).verify({
    publicKey: wallet.publicKey(),
    challenge,
    signature: Buffer.from(wallet.signMessage(challenge)).toString('base64'),
  });
}

async function login(url: string, wallet: Keypair): Promise<string> {
  return (await verify(url, wallet, await challengeOf(url, wallet))).token;
}

/** Logs a new wallet in twice on the proxy at `url`, logs the first token out, and asks for a challenge. */
export async function openSessions(url: string): Promise<Sessions> {
  const wallet = Keypair.random();
  const loggedOut = await login(url, wallet);
  await walletApi(url, loggedOut).logout();
  return { wallet, loggedOut, kept: await login(url, wallet), challenge: await challengeOf(url, wallet) };
}

/** Every session of `s` is refused by the recovered proxy at `url`; a new login works. */
export async function checkSessionsEnded(t: ExecutionContext, url: string, s: Sessions): Promise<void> {
  for (const [name, token] of [
    ['the logged-out token', s.loggedOut],
    ['a token kept', s.kept],
  ] as const) {
    const rest = await refused(t, walletApi(url, token).agents(), `${name} on REST`);
    t.is(rest.status, 401, `${name} on REST: ${rest.detail}`);
    t.regex(rest.detail, /before this service’s store was recovered; log in again/);
    // /mcp is not the REST API: PoolApi does not speak it.
    const mcp = await postJson(
      `${url}/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream' },
    );
    t.is(mcp.status, 401, `${name} on /mcp: ${mcp.text}`);
  }
  const old = await refused(t, verify(url, s.wallet, s.challenge), 'a challenge from before the recovery');
  t.is(old.status, 401, `a challenge from before the recovery: ${old.detail}`);
  const fresh = await login(url, s.wallet);
  t.true(Array.isArray((await walletApi(url, fresh).agents()).agents), 'a new login works');
}
