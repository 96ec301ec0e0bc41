// The wallet page in real headless Chromium against `pool-proxy start`: a Freighter stand-in signs with a
// sandbox keypair; the page connects, funds the wallet, logs in, deposits, shows the balance and withdraws,
// and the destination's USDC is checked on chain; a payment of the wallet's agent shows with its receipt. A wallet on another network is refused, and refused
// deposits show the problem's title and detail.
import anyTest, { type TestFn } from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Keypair } from '@stellar/stellar-sdk';
import { buildWeb } from '../../scripts/build-web.ts';
import { launchChromium } from './helpers/browser.ts';
import { installFreighter, type StandIn } from './helpers/freighter-stand-in.ts';
import { type RunningService, startService, USDC } from './helpers/pool-proxy-start.ts';

const test = anyTest as TestFn<{ service: RunningService; browser: Browser }>;
const TESTNET = 'Test SDF Network ; September 2015';
const CONFIRM_MS = 180_000;

test.before(async (t) => {
  await buildWeb();
  const [service, browser] = await Promise.all([startService(), launchChromium()]);
  t.context = { service, browser };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.service?.stop();
});

interface Opened {
  context: BrowserContext;
  page: Page;
  wallet: StandIn;
  /** Console errors and failed page requests other than the missing favicon. */
  pageErrors: string[];
}

async function openPage(t: { context: { service: RunningService; browser: Browser } }, passphrase?: string) {
  const { service, browser } = t.context;
  const context = await browser.newContext();
  const wallet = await installFreighter(
    context,
    Keypair.random(),
    passphrase ?? service.networkPassphrase,
    service.rpcUrl,
  );
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !/favicon|status of 4\d\d/.test(m.text())) pageErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const response = await page.goto(service.proxyUrl);
  return { context, page, wallet, pageErrors, response } as Opened & { response: typeof response };
}

/** The text of a section's problem box once it is shown. */
async function problemOf(page: Page, section: string): Promise<{ title: string; detail: string }> {
  const box = page.locator(`#${section}-problem`);
  await box.waitFor({ state: 'visible' });
  return {
    title: (await box.locator('.problem-title').textContent()) ?? '',
    detail: (await box.locator('.problem-detail').textContent()) ?? '',
  };
}

test.serial(
  'a wallet connects, funds itself, logs in, deposits, sees its balance and withdraws',
  async (t) => {
    const { service } = t.context;
    const { context, page, wallet, pageErrors, response } = await openPage(t);
    t.teardown(() => context.close());

    // Served by the proxy under a strict CSP (no inline code, only the proxy and the sandbox friendbot).
    const csp = response!.headers()['content-security-policy'] ?? '';
    t.regex(csp, /script-src 'self'(;|$)/);
    t.regex(csp, /style-src 'self'(;|$)/);
    t.regex(csp, new RegExp(`connect-src 'self' ${service.sandboxUrl.replace(/\./g, '\\.')}(;|$)`));
    await page.locator('#proxy-network').filter({ hasText: 'stellar:local' }).waitFor();

    // Keyboard only: focus the button and press Enter.
    await page.locator('#connect').focus();
    await page.keyboard.press('Enter');
    const address = wallet.keypair.publicKey();
    await page.locator('#address').filter({ hasText: address }).waitFor();
    t.regex((await page.locator('#wallet-network').textContent()) ?? '', /Standalone Network/);
    t.true(await page.locator('#network-warning').isHidden());

    await page.getByRole('button', { name: 'Fund this wallet (sandbox)' }).click();
    await page.locator('#wallet-status').filter({ hasText: 'Funded' }).waitFor();
    t.is(await service.usdcBalance(address), 100n * USDC);

    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('#session').filter({ hasText: 'logged in (' }).waitFor();
    t.true(wallet.requests.some((r) => r.type === 'SUBMIT_BLOB' && String(r.blob).includes(address)));

    // While Freighter is asked to sign, the page shows the deposit's progress at the signing step.
    let progressAtSigning: { visible: boolean; step: string; done: string[] } | undefined;
    wallet.beforeAnswer = async (request) => {
      if (request.type !== 'SUBMIT_TRANSACTION') return;
      progressAtSigning = {
        visible: await page.locator('#deposit-progress').isVisible(),
        step: (await page.locator('#deposit-step').textContent()) ?? '',
        done: await page.locator('#deposit-steps li.done').allTextContents(),
      };
    };
    // Deposit 10 USDC by keyboard: type into the labelled field and submit with Enter.
    await page.getByLabel('Amount (USDC)', { exact: true }).first().fill('10');
    await page.locator('#deposit-amount').press('Enter');
    await page
      .locator('#deposit-status')
      .filter({ hasText: 'Deposit confirmed' })
      .waitFor({ timeout: CONFIRM_MS });
    wallet.beforeAnswer = undefined;
    t.deepEqual(progressAtSigning, {
      visible: true,
      step: 'Waiting for your signature in Freighter…',
      done: ['Proving and simulating the deposit'],
    });
    t.true(await page.locator('#deposit-progress').isHidden());
    t.is(await service.usdcBalance(address), 90n * USDC);

    const row = page.locator(`#agents-table tr[data-agent="${address}"] .balance`);
    await row.filter({ hasText: '10.0000000 USDC' }).waitFor();

    // A second agent of the same wallet: the list shows both, from the proxy's GET /api/agents.
    await page.locator('#deposit-amount').fill('3');
    await page.getByLabel('Agent (optional; default: your wallet address)').fill('web-savings');
    await page.getByRole('button', { name: 'Deposit' }).click();
    await page
      .locator('#deposit-status')
      .filter({ hasText: 'Deposit confirmed: 3.0000000 USDC to web-savings' })
      .waitFor({ timeout: CONFIRM_MS });
    await page
      .locator('#agents-table tr[data-agent="web-savings"] .balance')
      .filter({ hasText: '3.0000000 USDC' })
      .waitFor();
    t.is(await page.locator('#agents-table tbody tr').count(), 2);

    // Withdraw 2.5 USDC to a fresh account.
    const destination = Keypair.random().publicKey();
    await service.fund(destination, 0);
    await page.getByLabel('From agent').selectOption(address);
    await page.locator('#withdraw-amount').fill('2.5');
    await page.locator('#withdraw-destination').fill(destination);
    await page.getByRole('button', { name: 'Withdraw' }).click();
    await page
      .locator('#withdraw-status')
      .filter({ hasText: 'Withdrawal confirmed' })
      .waitFor({ timeout: CONFIRM_MS });
    t.regex((await page.locator('#withdraw-status').textContent()) ?? '', new RegExp(destination));
    await row.filter({ hasText: '7.5000000 USDC' }).waitFor();
    t.is(await service.usdcBalance(destination), 25_000_000n);

    // The wallet's agent pays the demo x402 service (through the API, as an agent would); the page lists the
    // payment with its receipt, the lower balance and the batch in the pool stats.
    const info = await (await fetch(`${service.proxyUrl}/api/pool/info`)).json();
    const demoUrl: string = info.payments.demoServiceUrl;
    const { challenge } = await (
      await fetch(`${service.proxyUrl}/api/auth/challenge?publicKey=${address}`)
    ).json();
    const login = await fetch(`${service.proxyUrl}/api/auth/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        publicKey: address,
        challenge,
        signature: Buffer.from(wallet.keypair.signMessage(challenge)).toString('base64'),
      }),
    });
    const { token } = await login.json();
    const paid = await (
      await fetch(`${service.proxyUrl}/api/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ serviceUrl: demoUrl, method: 'GET' }),
      })
    ).json();
    t.is(paid.paymentStatus, 'confirmed', JSON.stringify(paid));
    await page.getByRole('button', { name: 'Refresh payments' }).click();
    const payment = page.locator('#payments-table tbody tr').filter({ hasText: demoUrl });
    await payment.waitFor();
    const cells = await payment.locator('td').allTextContents();
    t.is(cells[1], address);
    t.is(cells[3], paid.receipt.amount);
    t.is(cells[4], 'confirmed');
    t.true(cells[5]!.includes(paid.receipt.transaction), 'the receipt shows the transaction hash');
    t.true(cells[5]!.includes(info.payments.x402Network), 'and the network');
    await page.getByRole('button', { name: 'Refresh balances' }).click();
    await row.filter({ hasText: '7.4900000 USDC' }).waitFor();
    await page.getByRole('button', { name: 'Refresh pool stats' }).click();
    await page.locator('#stat-batches').filter({ hasText: '1 payment at' }).waitFor();
    t.is(await page.locator('#stat-services').textContent(), '1');

    // Every field has a label and every button a name (keyboard and screen-reader use).
    t.deepEqual(
      await page.evaluate(() => [
        ...[...document.querySelectorAll('input, select')]
          .filter((e) => (e as HTMLInputElement).labels?.length === 0)
          .map((e) => `unlabelled ${e.id}`),
        ...[...document.querySelectorAll('button')]
          .filter((b) => !b.textContent?.trim())
          .map((b) => `unnamed ${b.id}`),
      ]),
      [],
    );

    // The token is kept in memory only.
    t.deepEqual(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]), [
      0,
      0,
      '',
    ]);
    t.deepEqual(pageErrors, []);
  },
);

test.serial(
  'a wallet on another network is refused, and refused deposits show title and detail',
  async (t) => {
    const { service } = t.context;
    const wrong = await openPage(t, TESTNET);
    t.teardown(() => wrong.context.close());
    await wrong.page.locator('#proxy-network').filter({ hasText: 'stellar:local' }).waitFor();
    await wrong.page.getByRole('button', { name: 'Connect Freighter' }).click();
    const warning = wrong.page.locator('#network-warning');
    await warning.waitFor({ state: 'visible' });
    t.regex(
      (await warning.textContent()) ?? '',
      /Wrong network.*Test SDF Network ; September 2015.*Standalone/,
    );
    t.true(await wrong.page.getByRole('button', { name: 'Log in' }).isDisabled());
    t.true(await wrong.page.getByRole('button', { name: 'Deposit' }).isDisabled());
    t.false(
      wrong.wallet.requests.some((r) => r.type === 'SUBMIT_BLOB'),
      'no login signature was asked',
    );

    // The right network, but a wallet without USDC: the proxy refuses the deposit.
    const right = await openPage(t);
    t.teardown(() => right.context.close());
    const { page, wallet } = right;
    await service.fund(wallet.keypair.publicKey(), 0);
    await page.getByRole('button', { name: 'Connect Freighter' }).click();
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('#session').filter({ hasText: 'logged in (' }).waitFor();

    // A malformed amount: the validation problem, with the field's message.
    await page.locator('#deposit-amount').fill('ten');
    await page.getByRole('button', { name: 'Deposit' }).click();
    const invalid = await problemOf(page, 'deposit');
    t.is(invalid.title, 'Invalid request');
    t.truthy(invalid.detail);
    t.regex((await page.locator('#deposit-problem .problem-issues').textContent()) ?? '', /amount/);

    // More USDC than the wallet holds: the ledger refuses the simulated deposit.
    await page.locator('#deposit-amount').fill('5');
    await page.getByRole('button', { name: 'Deposit' }).click();
    await page
      .locator('#deposit-problem')
      .filter({ hasNotText: 'Invalid request' })
      .waitFor({ timeout: CONFIRM_MS });
    const refused = await problemOf(page, 'deposit');
    t.not(refused.title, '');
    t.not(refused.detail, '');
    const text = (await page.locator('#deposit-problem').textContent()) ?? '';
    t.notRegex(text, /[{}]|\bat \S+:\d+/, 'no raw JSON or stack trace');
    t.log(`refused deposit: ${refused.title} — ${refused.detail}`);

    // The user declines the signature in the wallet.
    await service.fund(wallet.keypair.publicKey(), 20);
    wallet.declineNextSignature = true;
    await page.getByRole('button', { name: 'Deposit' }).click();
    await page.locator('#deposit-problem').filter({ hasText: 'Wallet' }).waitFor({ timeout: CONFIRM_MS });
    t.deepEqual(await problemOf(page, 'deposit'), {
      title: 'Wallet: transaction signature refused',
      detail: 'The user rejected this request.',
    });
    t.is(await service.usdcBalance(wallet.keypair.publicKey()), 20n * USDC, 'nothing was taken');
  },
);

test.serial('without the Freighter extension, Connect explains what is missing', async (t) => {
  const { service, browser } = t.context;
  const context = await browser.newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.goto(service.proxyUrl);
  await page.getByRole('button', { name: 'Connect Freighter' }).click();
  // freighter-api waits for the extension's answer to its status request, then reports it absent.
  t.deepEqual(await problemOf(page, 'wallet'), {
    title: 'Freighter not found',
    detail: 'Install the Freighter browser extension (freighter.app), unlock it, and reload this page.',
  });
  t.is(await page.locator('#address').textContent(), 'not connected');
  t.true(await page.getByRole('button', { name: 'Log in' }).isDisabled());
});
