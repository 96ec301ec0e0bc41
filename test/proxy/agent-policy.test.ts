// The pure rules of an agent's policy (src/proxy/domain/agent-policy.ts) and the claims of agent-scoped tokens
// (src/proxy/auth/tokens.ts): how the operator's limits bound a policy, which rule refuses first, the CSV of
// the payment record, what an `agt` claim may be, and how agent-token records are listed and swept. Service
// rules are in service-rules.test.ts.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { SignJWT } from 'jose';
import { DomainError } from '../../src/proxy/domain/errors.ts';
import { TokenService } from '../../src/proxy/auth/tokens.ts';
import {
  type AgentPolicy,
  checkBudgets,
  effectiveLimits,
  loosenings,
  NO_POLICY,
} from '../../src/proxy/domain/agent-policy.ts';
import { toCsv } from '../../src/proxy/payments/payment-export.ts';

const policy = (over: Partial<AgentPolicy>): AgentPolicy => ({ ...NO_POLICY, ...over });
const codeOf = (f: () => void) => {
  try {
    f();
    return undefined;
  } catch (error) {
    return (error as DomainError).code;
  }
};

test('the operator’s limits: the lower applies; a looser policy names each field that would not hold', (t) => {
  const operator = { paymentCap: 10_000_000n, budgetPerHour: 0n, budgetPerDay: 50_000_000n };
  t.deepEqual(effectiveLimits(NO_POLICY, operator), {
    perPaymentCap: 10_000_000n,
    budgets: { day: 50_000_000n },
  });
  const tight = policy({ perPaymentCap: 1n, budgets: { hour: 5n, day: 70_000_000n, days30: 9n } });
  t.deepEqual(effectiveLimits(tight, operator), {
    perPaymentCap: 1n,
    budgets: { hour: 5n, day: 50_000_000n, days30: 9n },
  });
  t.deepEqual(
    loosenings(policy({ perPaymentCap: 20_000_000n, budgets: { hour: 1n, day: 50_000_001n } }), operator).map(
      (l) => l.path,
    ),
    ['perPaymentCap', 'budgetPerDay'],
    'no operator hourly budget: any hourly budget tightens',
  );
  t.deepEqual(loosenings(tight, { ...operator, budgetPerDay: 80_000_000n }), []);
});

test('budgets refuse in the order hour, day, 30 days, at the first that the price would pass', (t) => {
  const p = policy({ budgets: { hour: 10n, day: 10n, days30: 10n } });
  t.is(
    codeOf(() => checkBudgets(p, { hour: 0n, day: 0n, days30: 0n }, 10n)),
    undefined,
    'exactly the budget fits',
  );
  t.is(
    codeOf(() => checkBudgets(p, { hour: 1n, day: 1n, days30: 1n }, 10n)),
    'policy_budget_hour',
  );
  t.is(
    codeOf(() =>
      checkBudgets(policy({ budgets: { day: 10n, days30: 10n } }), { hour: 5n, day: 5n, days30: 5n }, 6n),
    ),
    'policy_budget_day',
  );
  t.is(
    codeOf(() => checkBudgets(policy({ budgets: { days30: 10n } }), { hour: 0n, day: 0n, days30: 5n }, 6n)),
    'policy_budget_30d',
  );
});

test('the CSV record quotes what needs quoting and defuses formulas', (t) => {
  const row = {
    time: '2026-11-27T10:00:00.000Z',
    service: 'https://a.example/x?a=1,b="2"',
    amount: '0.0100000',
    status: 'confirmed' as const,
    batch: '=HYPERLINK("x")',
    transaction: 'ab',
    paymentId: 'p1',
  };
  t.is(
    toCsv([row]),
    'time,service,amount,status,batch,transaction,paymentId\r\n' +
      '2026-11-27T10:00:00.000Z,"https://a.example/x?a=1,b=""2""",0.0100000,confirmed,"\'=HYPERLINK(""x"")",ab,p1\r\n',
  );
});

test('agent tokens: the agt claim names one agent; a wallet token is unchanged; a bad agt or a bare operator subject is refused', async (t) => {
  const masterKey = randomBytes(32);
  const settings = { issuer: 'pool-proxy', audience: 'pool-proxy-api', ttlSeconds: 3600 };
  const tokens = new TokenService(masterKey, settings);
  const wallet = 'GBXFXNDLV4LSWA4VB7YIL5GBD7BVNR22SGBTDKMO2SBZZHDXSKZYCP7L';
  const plain = await tokens.verify(await tokens.issue(wallet));
  t.is(plain.agt, undefined);
  const { token, claims } = await tokens.issueForAgent(wallet, 'agent-1', 600);
  t.like(await tokens.verify(token), { sub: wallet, agt: 'agent-1', exp: claims.exp });
  const operatorAgent = await tokens.issueForAgent('operator', 'mcp-agent', 600);
  t.like(await tokens.verify(operatorAgent.token), { sub: 'operator', agt: 'mcp-agent' });
  // Tokens signed with the same key but claims no issuer would write: refused.
  const signer = async (claims: Record<string, unknown>, sub: string) => {
    const { createPrivateKey } = await import('node:crypto');
    const { deriveEpochKey } = await import('../../src/proxy/store/derived-keys.ts');
    const seed = deriveEpochKey(masterKey, 'jwt-signing', '');
    const key = createPrivateKey({
      key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]),
      format: 'der',
      type: 'pkcs8',
    });
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer(settings.issuer)
      .setAudience(settings.audience)
      .setSubject(sub)
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .setJti('00000000-0000-4000-8000-000000000001')
      .sign(key);
  };
  for (const [claims, sub] of [
    [{ agt: '../other' }, wallet],
    [{ agt: 7 }, wallet],
    [{}, 'operator'],
  ] as const) {
    const error = await t.throwsAsync(tokens.verify(await signer(claims, sub)));
    t.is((error as DomainError).code, 'unauthorized', JSON.stringify(claims));
  }
});

test('agent-token records: listed while live, forgotten by the sweep once expired', async (t) => {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { EncryptedStore } = await import('../../src/proxy/store/encrypted-store.ts');
  const { AgentTokens } = await import('../../src/proxy/services/agent-tokens.ts');
  const store = await EncryptedStore.open(mkdtempSync(join(tmpdir(), 'agent-tokens-')), randomBytes(32));
  try {
    const records = new AgentTokens(store);
    const ref = { owner: 'operator', agentId: 'a' };
    await records.add(ref, { tokenId: 'old', agentId: 'a', issuedAt: 100, expiresAt: 200 });
    await records.add(ref, { tokenId: 'new', agentId: 'a', issuedAt: 150, expiresAt: 400 });
    t.deepEqual(
      (await records.list(ref, 100)).map((r) => r.tokenId),
      ['old', 'new'],
    );
    t.deepEqual(
      (await records.list(ref, 300)).map((r) => r.tokenId),
      ['new'],
    );
    t.is(await records.sweepExpired(300), 1);
    t.is(await records.get(ref, 'old'), undefined);
    t.truthy(await records.get(ref, 'new'));
    t.deepEqual(
      await records.list({ owner: 'operator', agentId: 'b' }, 0),
      [],
      'another agent’s are its own',
    );
  } finally {
    await store.close();
  }
});
