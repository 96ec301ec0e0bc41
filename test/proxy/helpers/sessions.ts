// Sessions before a store recovery, and the check that every one of them ended after it: a token its wallet
// logged out, a token it kept, and a login challenge it never used; on REST and on /mcp alike.
import { Keypair } from '@stellar/stellar-sdk';
import type { ExecutionContext } from 'ava';
import { getJson, postJson, rawRequest } from './http.ts';

export interface Sessions {
  wallet: Keypair;
  loggedOut: string;
  kept: string;
  /** a challenge issued and never answered */
  challenge: string;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function challengeOf(url: string, wallet: Keypair): Promise<string> {
  return (await getJson(`${url}/api/auth/challenge?publicKey=${wallet.publicKey()}`)).json.challenge;
}

function verify(url: string, wallet: Keypair, challenge: string) {
  return postJson(`${url}/api/auth/verify`, {
    publicKey: wallet.publicKey(),
    challenge,
    signature: Buffer.from(wallet.signMessage(challenge)).toString('base64'),
  });
}

async function login(url: string, wallet: Keypair): Promise<string> {
  const res = await verify(url, wallet, await challengeOf(url, wallet));
  if (res.status !== 200) throw new Error(`login failed: ${res.text}`);
  return res.json.token;
}

/** Logs a new wallet in twice on the proxy at `url`, logs the first token out, and asks for a challenge. */
export async function openSessions(url: string): Promise<Sessions> {
  const wallet = Keypair.random();
  const loggedOut = await login(url, wallet);
  const out = await rawRequest(`${url}/api/auth/logout`, { method: 'POST', headers: bearer(loggedOut) });
  if (out.status !== 200) throw new Error(`logout failed: ${out.text}`);
  return { wallet, loggedOut, kept: await login(url, wallet), challenge: await challengeOf(url, wallet) };
}

/** Every session of `s` is refused by the recovered proxy at `url`; a new login works. */
export async function checkSessionsEnded(t: ExecutionContext, url: string, s: Sessions): Promise<void> {
  for (const [name, token] of [
    ['the logged-out token', s.loggedOut],
    ['a token kept', s.kept],
  ] as const) {
    const rest = await getJson(`${url}/api/agents`, bearer(token));
    t.is(rest.status, 401, `${name} on REST: ${rest.text}`);
    t.regex(rest.json.detail, /before this service’s store was recovered; log in again/);
    const mcp = await postJson(
      `${url}/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { ...bearer(token), accept: 'application/json, text/event-stream' },
    );
    t.is(mcp.status, 401, `${name} on /mcp: ${mcp.text}`);
  }
  const old = await verify(url, s.wallet, s.challenge);
  t.is(old.status, 401, `a challenge from before the recovery: ${old.text}`);
  const fresh = await login(url, s.wallet);
  t.is((await getJson(`${url}/api/agents`, bearer(fresh))).status, 200, 'a new login works');
}
