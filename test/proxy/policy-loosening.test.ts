// Which policy changes loosen a policy (src/proxy/domain/policy-loosening.ts), table-driven: every field that
// can be loosened is listed when it is (removed, raised, widened, emptied, unfrozen, turned off), and never
// when it is tightened or left as it was.
import test from 'ava';
import { type AgentPolicy, NO_POLICY } from '../../src/proxy/domain/agent-policy.ts';
import { loosenedFields } from '../../src/proxy/domain/policy-loosening.ts';

const USDC = 10_000_000n;
const DEST_A = 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7';
const DEST_B = 'GCEZWKCA5VLDNRLN3RPRJMRZOX3Z6G5CHCGSNFHEYVXM3XOJMDS674JZ';

/** A protected policy with every limit set. */
const base: AgentPolicy = {
  ...NO_POLICY,
  perPaymentCap: 1n * USDC,
  budgets: { hour: 2n * USDC, day: 5n * USDC, days30: 20n * USDC },
  approvalThreshold: USDC / 2n,
  approvalTimeoutSeconds: 300,
  allowedServices: ['https://api.example.com/weather', 'https://news.example.org'],
  deniedServices: ['https://api.example.com/weather/premium', 'https://bad.example.net'],
  frozen: true,
  requireWithdrawalSignature: true,
  withdrawalDestinations: [DEST_A],
  updatedAt: 1,
};

const cases: Array<[string, Partial<AgentPolicy>, string[]]> = [
  // unchanged, and tightenings
  ['the same policy', {}, []],
  ['a lower cap', { perPaymentCap: USDC / 10n }, []],
  ['lower budgets', { budgets: { hour: 1n, day: 1n, days30: 1n } }, []],
  ['a lower approval threshold', { approvalThreshold: 0n }, []],
  ['a longer or shorter approval wait', { approvalTimeoutSeconds: 30 }, []],
  ['an allowed service removed', { allowedServices: ['https://news.example.org'] }, []],
  [
    'an allowed service narrowed to a path below it',
    { allowedServices: ['https://news.example.org/sport'] },
    [],
  ],
  [
    'an allowed service added inside one already allowed',
    { allowedServices: [...base.allowedServices, 'https://api.example.com/weather/today'] },
    [],
  ],
  ['a denied service added', { deniedServices: [...base.deniedServices, 'https://x.example'] }, []],
  [
    'a denied path widened to its whole origin',
    { deniedServices: ['https://api.example.com', 'https://bad.example.net'] },
    [],
  ],
  // loosenings, one field each
  ['the cap removed', { perPaymentCap: undefined }, ['perPaymentCap']],
  ['the cap raised', { perPaymentCap: 2n * USDC }, ['perPaymentCap']],
  ['the hourly budget raised', { budgets: { ...base.budgets, hour: 3n * USDC } }, ['budgetPerHour']],
  ['the daily budget removed', { budgets: { hour: 2n * USDC, days30: 20n * USDC } }, ['budgetPerDay']],
  ['the 30-day budget raised', { budgets: { ...base.budgets, days30: 21n * USDC } }, ['budgetPer30Days']],
  ['the approval threshold raised', { approvalThreshold: USDC }, ['approvalThreshold']],
  ['the approval threshold removed', { approvalThreshold: undefined }, ['approvalThreshold']],
  ['the allow list emptied (any service)', { allowedServices: [] }, ['allowedServices']],
  [
    'a new service allowed',
    { allowedServices: [...base.allowedServices, 'https://thief.example'] },
    ['allowedServices'],
  ],
  [
    'an allowed path widened to its whole origin',
    { allowedServices: ['https://api.example.com', 'https://news.example.org'] },
    ['allowedServices'],
  ],
  [
    'the same origin over http instead',
    { allowedServices: ['http://news.example.org'] },
    ['allowedServices'],
  ],
  ['a denied service removed', { deniedServices: ['https://bad.example.net'] }, ['deniedServices']],
  [
    'a denied service narrowed to a path below it',
    { deniedServices: ['https://api.example.com/weather/premium/gold', 'https://bad.example.net'] },
    ['deniedServices'],
  ],
  ['unfrozen', { frozen: false }, ['frozen']],
  ['the signature turned off', { requireWithdrawalSignature: false }, ['requireWithdrawalSignature']],
  ['a destination added', { withdrawalDestinations: [DEST_A, DEST_B] }, ['withdrawalDestinations']],
  ['the address book emptied (any destination)', { withdrawalDestinations: [] }, ['withdrawalDestinations']],
  ['the destination swapped', { withdrawalDestinations: [DEST_B] }, ['withdrawalDestinations']],
  // several at once: the issue's `PUT {}` on a protected agent
  [
    'everything reset to the operator’s defaults',
    {
      perPaymentCap: undefined,
      budgets: {},
      approvalThreshold: undefined,
      allowedServices: [],
      deniedServices: [],
      frozen: false,
    },
    [
      'perPaymentCap',
      'budgetPerHour',
      'budgetPerDay',
      'budgetPer30Days',
      'approvalThreshold',
      'allowedServices',
      'deniedServices',
      'frozen',
    ],
  ],
];

for (const [name, change, expected] of cases)
  test(`loosened fields: ${name}`, (t) => {
    t.deepEqual(loosenedFields(base, { ...base, ...change, updatedAt: 2 }), expected);
  });

test('from no policy at all, nothing can be loosened but the allow list stays open', (t) => {
  t.deepEqual(loosenedFields(NO_POLICY, base), []);
  t.deepEqual(loosenedFields(NO_POLICY, NO_POLICY), []);
  // and an unset book (any destination) is not loosened by adding one
  t.deepEqual(
    loosenedFields({ ...base, withdrawalDestinations: [] }, { ...base, withdrawalDestinations: [DEST_B] }),
    [],
  );
});
