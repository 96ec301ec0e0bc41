// The wallet page in real headless Chromium against `pool-proxy start`: a Freighter stand-in signs with a
// sandbox keypair; the page connects, funds the wallet, logs in, deposits (a new agent requires the wallet's
// signature for withdrawals from the start), shows the balance and withdraws (signed in Freighter), and the
// destination's USDC is checked on chain; a payment of the wallet's agent shows with its receipt. The owner sets
// the agent's policy (problems at the field), freezes and unfreezes it (the unfreeze signed in Freighter),
// issues, uses and revokes an agent token, exports its payments, sets an approval threshold and denies, approves
// and sees a refusal on payments waiting for it, and loosens the withdrawal settings with the wallet's
// signature, at 1280 and 390 px
// (WEB_SCREENSHOTS=<folder> saves screenshots). The withdraw destination starts empty and warns before linking
// a withdrawal to its deposit; a ledger refusal is one plain sentence; the layout holds at 390 and 768 px. A
// switch of account or network in the wallet clears everything of the previous account and sends no signature
// request for the wrong network; Log out ends the token on the server. A wallet on another network is refused,
// and a refused deposit signature cancels the prepared deposit. Without the extension, the page says so on load.
import anyTest, { type TestFn } from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Keypair, TransactionBuilder } from '#stellar-sdk';
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
  /** Console errors and failed page requests. */
  pageErrors: string[];
  /** Every API request the page sent, in order (method and path). */
  apiRequests: string[];
  /** The bearer token of the page's latest authenticated request. */
  token(): string | undefined;
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
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) pageErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const apiRequests: string[] = [];
  let token: string | undefined;
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith('/api/')) apiRequests.push(`${request.method()} ${url.pathname}`);
    const bearer = /^Bearer (.+)$/.exec(request.headers().authorization ?? '');
    if (bearer) token = bearer[1];
  });
  const response = await page.goto(service.proxyUrl);
  return { context, page, wallet, pageErrors, apiRequests, token: () => token, response } as Opened & {
    response: typeof response;
  };
}

/** The text of a section's problem box once it is shown. */
async function problemOf(
  page: Page,
  section: string,
): Promise<{ title: string; detail: string; moved: string }> {
  const box = page.locator(`#${section}-problem`);
  await box.waitFor({ state: 'visible' });
  return {
    title: (await box.locator('.problem-title').textContent()) ?? '',
    detail: (await box.locator('.problem-detail').textContent()) ?? '',
    moved: (await box.locator('.problem-moved').textContent()) ?? '',
  };
}

const NOTHING_MOVED = 'Nothing moved: your wallet and the pool are as they were.';

/** At the page's current width: horizontal overflow, and controls under 44 px tall or outside their card. */
async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth)
      found.push(`the page scrolls sideways: ${root.scrollWidth} > ${root.clientWidth}`);
    for (const control of document.querySelectorAll<HTMLElement>('button, input, select')) {
      const box = control.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue; // hidden
      const name = control.id || control.textContent || control.tagName;
      if (box.height < 44) found.push(`#${name} is ${box.height.toFixed(1)} px tall`);
      const card = control.closest('section')?.getBoundingClientRect();
      if (
        card &&
        (box.left < card.left || box.right > card.right || box.top < card.top || box.bottom > card.bottom)
      )
        found.push(`#${name} sits outside its card`);
    }
    for (const th of document.querySelectorAll<HTMLElement>('th')) {
      const box = th.getBoundingClientRect();
      if (box.width > 0 && th.scrollWidth > th.clientWidth + 1)
        found.push(`header "${th.textContent}" is cut`);
    }
    return found;
  });
}

async function checkLayout(t: { deepEqual(a: unknown, b: unknown, m?: string): void }, page: Page) {
  for (const [width, height] of [
    [390, 844],
    [768, 1024],
  ]) {
    await page.setViewportSize({ width: width!, height: height! });
    t.deepEqual(await layoutProblems(page), [], `at ${width} px`);
  }
  await page.setViewportSize({ width: 1280, height: 720 });
}

/** The status of `token` against the proxy's API right now. */
async function tokenStatus(service: RunningService, token: string | undefined): Promise<number> {
  if (token === undefined) throw new Error('the page sent no token');
  return (await fetch(`${service.proxyUrl}/api/agents`, { headers: { authorization: `Bearer ${token}` } }))
    .status;
}

/** The page of the first test, kept open for the switch and Log out test that follows it. */
let journey: (Opened & { address: string }) | undefined;

test.serial(
  'a wallet connects, funds itself, logs in, deposits, sees its balance and withdraws',
  async (t) => {
    const { service } = t.context;
    const opened = await openPage(t);
    const { page, wallet, pageErrors, response } = opened;

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
    await page.locator(`#address [data-full="${address}"]`).waitFor();
    t.is(await page.locator('#address').innerText(), `${address.slice(0, 1)}…${address.slice(-4)}\nCopy`);
    t.regex((await page.locator('#wallet-network').textContent()) ?? '', /Standalone Network/);
    t.true(await page.locator('#network-warning').isHidden());

    await page.getByRole('button', { name: 'Fund this wallet (sandbox)' }).click();
    await page.locator('#wallet-status').filter({ hasText: 'Funded' }).waitFor();
    t.is(await service.usdcBalance(address), 100n * USDC);

    await page.getByRole('button', { name: 'Log in' }).click();
    await page
      .locator('#session')
      .filter({ hasText: /^Logged in$/ })
      .waitFor();
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
      await screenshot(page, 'deposit-signing', '#deposit');
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

    const row = page.locator(`#agents-list [data-agent="${address}"] .balance`);
    await row.filter({ hasText: '10.00 USDC' }).waitFor();

    // A second agent of the same wallet: the list shows both, from the proxy's GET /api/agents.
    await page.locator('#deposit-amount').fill('3');
    await page.getByLabel('Agent (optional; default: your wallet address)').fill('web-savings');
    await page.getByRole('button', { name: 'Deposit' }).click();
    await page
      .locator('#deposit-status')
      .filter({ hasText: 'Deposit confirmed: 3.00 USDC to web-savings' })
      .waitFor({ timeout: CONFIRM_MS });
    await page
      .locator('#agents-list [data-agent="web-savings"] .balance')
      .filter({ hasText: '3.00 USDC' })
      .waitFor();
    t.is(await page.locator('#agents-list li[data-agent]').count(), 2);

    // Withdraw: the destination starts empty; the depositing wallet's own address, or exactly what the agent
    // holds, is warned about before anything is sent.
    const destinationField = page.locator('#withdraw-destination');
    t.is(await destinationField.inputValue(), '', 'no prefilled destination');
    await page.getByLabel('From agent').selectOption(address);
    await page.locator('#withdraw-amount').fill('10');
    const warning = page.locator('#withdraw-warning');
    await warning.filter({ hasText: 'exactly what this agent received minus what it spent' }).waitFor();
    await destinationField.fill(address);
    await warning.filter({ hasText: 'This is the wallet that deposited' }).waitFor();
    t.is(await page.locator('#withdraw-submit').textContent(), 'Withdraw anyway');

    // An account that cannot hold USDC: one plain sentence that names the fix, and nothing moved.
    await page.locator('#withdraw-amount').fill('0.5');
    await destinationField.fill(Keypair.random().publicKey());
    t.true(await warning.isHidden(), 'nothing to warn about');
    await page.getByRole('button', { name: 'Withdraw' }).click();
    const noTrustline = await problemOf(page, 'withdraw');
    t.is(noTrustline.title, 'That account cannot receive USDC yet');
    t.regex(noTrustline.detail, /add the USDC asset/);
    t.is(noTrustline.moved, NOTHING_MOVED);
    t.notRegex(
      (await page.locator('#withdraw-problem').textContent()) ?? '',
      /HostError|Error\(Contract|#\d+/,
    );

    // The agents the page created require the wallet's signature for every withdrawal from the start (shown in
    // the agent controls): a bearer token alone does not withdraw; the page's withdrawal carries a fresh
    // signature of the proxy's message.
    await page.locator('#policy-signature:checked').waitFor();
    for (const agent of [address, 'web-savings']) {
      const policy = await fetch(`${service.proxyUrl}/api/agents/${agent}/policy`, {
        headers: { authorization: `Bearer ${opened.token()}` },
      });
      t.true((await policy.json()).requireWithdrawalSignature, `on by default for ${agent}`);
    }
    const destination = Keypair.random().publicKey();
    const unsigned = await fetch(`${service.proxyUrl}/api/withdraw`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${opened.token()}` },
      body: JSON.stringify({ amount: '1', destination }),
    });
    t.is(unsigned.status, 403);
    t.is((await unsigned.json()).code, 'wallet_signature_required');

    // Withdraw 2.5 USDC to a fresh account; the form is empty again afterwards.
    await service.fund(destination, 0);
    await page.locator('#withdraw-amount').fill('2.5');
    await destinationField.fill(destination);
    await page.getByRole('button', { name: 'Withdraw' }).click();
    await page
      .locator('#withdraw-status')
      .filter({ hasText: 'Withdrawal confirmed' })
      .waitFor({ timeout: CONFIRM_MS });
    t.regex(
      (await page.locator('#withdraw-status').textContent()) ?? '',
      new RegExp(`2\\.50 USDC to G…${destination.slice(-4)}`),
    );
    await row.filter({ hasText: '7.50 USDC' }).waitFor();
    t.is(await service.usdcBalance(destination), 25_000_000n);
    t.true(
      wallet.requests.some(
        (r) =>
          r.type === 'SUBMIT_BLOB' &&
          String(r.blob).includes(`Withdraw 2.5000000 USDC from agent ${address} to ${destination}.`),
      ),
      'the wallet signed exactly this withdrawal',
    );
    t.deepEqual(
      [await page.locator('#withdraw-amount').inputValue(), await destinationField.inputValue()],
      ['', ''],
      'a second click cannot withdraw again',
    );

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
    t.is(await payment.locator('td[data-label="Agent"] [data-full]').getAttribute('data-full'), address);
    t.is(cells[3], '0.01 USDC');
    t.is(paid.receipt.amount, '0.0100000');
    t.is(cells[4], 'confirmed');
    const receipt = payment.locator('td[data-label="Receipt"]');
    t.is(
      await receipt.locator(`[data-full="${paid.receipt.transaction}"]`).count(),
      1,
      'the receipt names its transaction',
    );
    t.is(await receipt.getAttribute('data-network'), info.payments.x402Network, 'on its network');
    t.regex(cells[5]!, /^0\.01 USDC to /, 'named in USDC');
    t.false((await payment.innerHTML()).includes(service.token), "never by the token's contract id");
    await page.getByRole('button', { name: 'Refresh balances' }).click();
    await row.filter({ hasText: '7.49 USDC' }).waitFor();
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
    // A phone and a tablet: no sideways scrolling, every control 44 px tall and inside its card.
    await checkLayout(t, page);
    t.deepEqual(pageErrors, []);
    journey = { ...opened, address };
  },
);

/** With WEB_SCREENSHOTS=<folder>, saves the whole page there as `<name>.png` (for docs/screenshots). */
async function screenshot(page: Page, name: string, part?: string): Promise<void> {
  const folder = process.env.WEB_SCREENSHOTS;
  if (!folder) return;
  const path = join(folder, `${name}.png`);
  if (part) await page.locator(part).screenshot({ path });
  else await page.screenshot({ path, fullPage: true });
}

/**
 * Saves the policy form and waits for the proxy's answer and the page's confirmation of that save (a loosening
 * of a protected policy is answered 403 first, then sent again with the wallet's signature).
 */
async function savePolicy(page: Page): Promise<void> {
  const put = page.waitForResponse(
    (r) => r.url().endsWith('/policy') && r.request().method() === 'PUT' && r.status() !== 403,
  );
  await page.getByRole('button', { name: 'Save policy' }).click();
  if ((await put).status() !== 200) throw new Error(`the policy was refused: ${await (await put).text()}`);
  await page.locator('#policy-status').filter({ hasText: 'Policy saved' }).waitFor();
}

/** The page scrolls sideways at 390 px? (its content width, which must not exceed the viewport's). */
const scrollWidth = (page: Page) => page.evaluate(() => document.scrollingElement!.scrollWidth);

test.serial(
  'the owner sets a policy, freezes and unfreezes, issues and revokes an agent token, exports and decides approvals, at 1280 and 390 px',
  async (t) => {
    const { service } = t.context;
    if (journey === undefined) return t.fail('the first test did not leave its page');
    const { page, address, pageErrors, apiRequests, token, wallet } = journey;
    const bearer = (value: string | undefined) => ({ authorization: `Bearer ${value}` });
    const policyUrl = `${service.proxyUrl}/api/agents/${address}/policy`;
    const info = await (await fetch(`${service.proxyUrl}/api/pool/info`)).json();
    const demoOrigin = new URL(info.payments.demoServiceUrl).origin;

    await page.setViewportSize({ width: 1280, height: 900 });
    const card = page.locator(`#agents-list [data-agent="${address}"]`);
    await card.getByRole('button', { name: 'Manage' }).click();
    await page.locator('#manage').waitFor();
    t.is(await page.locator('#manage-agent').inputValue(), address);

    // The page's own check: a malformed amount is shown at its field and nothing is sent.
    const policyPuts = () => apiRequests.filter((r) => r === `PUT /api/agents/${address}/policy`).length;
    const putsBefore = policyPuts();
    const puts = () => policyPuts() - putsBefore;
    t.true(await page.getByLabel("Require my wallet's signature for every withdrawal").isChecked());
    await page.getByLabel('Budget per hour (USDC)').fill('lots');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.locator('#policy-hour-error').filter({ hasText: 'write an amount' }).waitFor();
    t.is(await page.locator('#policy-hour').getAttribute('aria-invalid'), 'true');
    t.is(puts(), 0);
    // The proxy's: a cap above the operator's (1 USDC) is refused, and said at the cap field.
    await page.getByLabel('Budget per hour (USDC)').fill('');
    await page.getByLabel('Per-payment cap (USDC)').fill('5');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.locator('#policy-cap-error').waitFor({ state: 'visible' });
    t.true(await page.locator('#policy-hour-error').isHidden(), 'only the field it applies to');
    t.is(puts(), 1);
    t.is((await (await fetch(policyUrl, { headers: bearer(token()) })).json()).perPaymentCap, null);

    await page.getByLabel('Per-payment cap (USDC)').fill('0.5');
    await page.getByLabel('Budget per day (USDC)').fill('2');
    await page.getByLabel('Allowed services (one per line; empty: any)').fill(demoOrigin);
    await savePolicy(page);
    t.true(await page.locator('#policy-cap-error').isHidden());
    const saved = await (await fetch(policyUrl, { headers: bearer(token()) })).json();
    t.like(saved, { perPaymentCap: '0.5000000', budgetPerDay: '2.0000000', allowedServices: [demoOrigin] });
    // The card draws what is left of the day's budget (the demo payment spent 0.01).
    const day = card.locator('[data-window="Last 24 hours"]');
    await day.filter({ hasText: '1.99 of 2.00 USDC left' }).waitFor();
    t.is(await day.locator('[role="meter"]').getAttribute('aria-valuenow'), '0.0100000');
    t.regex((await card.locator('.policy-facts').textContent()) ?? '', /Cap 0\.50 USDC per payment/);
    await screenshot(page, 'wallet-1280');
    // An edit under way survives a refresh of the balances (which fetches the policies again).
    await page.getByLabel('Budget per hour (USDC)').fill('0.3');
    const refreshed = page.waitForResponse(
      (r) => r.url().endsWith(`/api/agents/${address}/policy`) && r.request().method() === 'GET',
    );
    await page.getByRole('button', { name: 'Refresh balances' }).click();
    await refreshed;
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)));
    t.is(await page.locator('#policy-hour').inputValue(), '0.3');
    await page.getByLabel('Budget per hour (USDC)').fill('');

    // Freeze: the agent's payments are refused at once; unfreeze, signed by the wallet, restores it.
    await page.getByRole('button', { name: 'Freeze agent' }).click();
    await card.locator('.badge').filter({ hasText: 'Frozen' }).waitFor();
    const pay = await fetch(`${service.proxyUrl}/api/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(token()) },
      body: JSON.stringify({ serviceUrl: info.payments.demoServiceUrl, method: 'GET' }),
    });
    t.is(pay.status, 403);
    t.is((await pay.json()).code, 'agent_frozen');
    const beforeUnfreeze = wallet.requests.length;
    await page.getByRole('button', { name: 'Unfreeze agent' }).click();
    await card.locator('.badge').filter({ hasText: 'Active' }).waitFor();
    t.false((await (await fetch(policyUrl, { headers: bearer(token()) })).json()).frozen);
    // the agent is protected (the page asked for the wallet's signature at its first deposit): Freighter signed it
    t.true(
      wallet.requests
        .slice(beforeUnfreeze)
        .some((r) => r.type === 'SUBMIT_BLOB' && /Unfreeze agent /.test(String(r.blob))),
    );

    // On a phone: issue an agent token (shown once, with Copy), use it, revoke it.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Issue token' }).click();
    const issued = page.locator('#tokens-new');
    await issued.waitFor();
    t.regex((await issued.textContent()) ?? '', /shown only now/);
    const agentToken = (await page.locator('#tokens-new-value').textContent()) ?? '';
    t.is(await page.locator('#tokens-new-copy').getAttribute('data-copy'), agentToken);
    await page.locator('#tokens-list li[data-token]').first().waitFor();
    t.is(await page.locator('#tokens-list li[data-token]').count(), 1);
    t.is((await fetch(policyUrl, { headers: bearer(agentToken) })).status, 200, 'the agent token reads');
    await screenshot(page, 'wallet-390-agents', '#agents');
    await screenshot(page, 'wallet-390-tokens', '#tokens');
    await page
      .locator('#tokens-list')
      .getByRole('button', { name: /^Revoke token/ })
      .click();
    await page.locator('#tokens-status').filter({ hasText: 'revoked' }).waitFor();
    t.is(await page.locator('#tokens-list li[data-token]').count(), 0);
    t.true(await issued.isHidden(), 'the revoked token is no longer on screen');
    t.is(
      (await fetch(policyUrl, { headers: bearer(agentToken) })).status,
      401,
      'and is refused once revoked',
    );

    // Export today's payments as CSV, then as JSON: a download of the proxy's record.
    const today = new Date().toISOString().slice(0, 10);
    await page.getByLabel('From (UTC, included)').fill(today);
    await page.getByLabel('Until (UTC, included)').fill(today);
    const download = async () => {
      const [file] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download' }).click(),
      ]);
      return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, 'utf8') };
    };
    const csv = await download();
    t.regex(csv.name, new RegExp(`^payments-${address.slice(-8)}-${today}-to-${today}\\.csv$`));
    t.regex(csv.text, /^time,service,amount,status,batch,transaction,paymentId/);
    t.true(csv.text.includes(info.payments.demoServiceUrl), 'the demo payment is in it');
    await page.getByLabel('Format').selectOption('json');
    const json = JSON.parse((await download()).text);
    t.is(json.payments.length, 1);
    t.like(json.payments[0], {
      service: info.payments.demoServiceUrl,
      amount: '0.0100000',
      status: 'confirmed',
    });

    // Approvals: a payment above the threshold set through the page waits at the top of the page.
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByLabel('Ask my approval above (USDC)').fill('0.005');
    await page.getByLabel('Approval waits (minutes; empty: 15)').fill('10');
    await savePolicy(page);
    t.like(await (await fetch(policyUrl, { headers: bearer(token()) })).json(), {
      approvalThreshold: '0.0050000',
      approvalTimeoutSeconds: 600,
      requireWithdrawalSignature: true,
    });
    const payDemo = async () => {
      const res = await fetch(`${service.proxyUrl}/api/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(token()) },
        body: JSON.stringify({ serviceUrl: info.payments.demoServiceUrl, method: 'GET' }),
      });
      const body = await res.json();
      t.is(res.status, 202, JSON.stringify(body));
      t.is(body.paymentStatus, 'awaiting_approval');
      await page.getByRole('button', { name: 'Refresh balances' }).click();
      const waiting = page.locator(`#approvals-list [data-payment="${body.paymentId}"]`);
      await waiting.waitFor();
      return { paymentId: body.paymentId as string, waiting };
    };
    const paymentState = async (paymentId: string) =>
      (await fetch(`${service.proxyUrl}/api/payments/${paymentId}`, { headers: bearer(token()) })).json();
    const denied = await payDemo();
    const shown = (await denied.waiting.textContent()) ?? '';
    t.true(shown.includes('0.01 USDC') && shown.includes(info.payments.demoServiceUrl), shown);
    await screenshot(page, 'wallet-approvals', '#approvals');
    await denied.waiting.getByRole('button', { name: /^Deny/ }).click();
    await page.locator('#approvals-status').filter({ hasText: 'Denied' }).waitFor();
    await denied.waiting.waitFor({ state: 'detached' });
    t.like(await paymentState(denied.paymentId), { paymentStatus: 'failed' });
    const approved = await payDemo();
    await approved.waiting.getByRole('button', { name: /^Approve/ }).click();
    await page.locator('#approvals-status').filter({ hasText: 'Approved' }).waitFor();
    for (let i = 0; (await paymentState(approved.paymentId)).paymentStatus !== 'confirmed'; i++) {
      if (i > 300) return t.fail('the approved payment was not paid');
      await new Promise((r) => setTimeout(r, 100));
    }
    // Decided elsewhere meanwhile: the refusal shows on its row.
    const decided = await payDemo();
    const elsewhere = await fetch(`${service.proxyUrl}/api/approvals/${decided.paymentId}/deny`, {
      method: 'POST',
      headers: bearer(token()),
    });
    t.is(elsewhere.status, 200);
    await decided.waiting.getByRole('button', { name: /^Approve/ }).click();
    await decided.waiting.locator('.approval-problem').filter({ hasText: 'Already decided' }).waitFor();

    // Loosening the withdrawal settings asks the wallet to sign the policy it makes.
    const signedBefore = wallet.requests.length;
    await page.getByLabel("Require my wallet's signature for every withdrawal").uncheck();
    await savePolicy(page);
    t.true(
      wallet.requests
        .slice(signedBefore)
        .some(
          (r) =>
            r.type === 'SUBMIT_BLOB' &&
            /Change the policy of agent .*, loosening .*requireWithdrawalSignature/.test(String(r.blob)),
        ),
    );
    t.false((await (await fetch(policyUrl, { headers: bearer(token()) })).json()).requireWithdrawalSignature);
    t.deepEqual(await layoutProblems(page), [], 'at 1280 px');

    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'wallet-390-approvals', '#approvals');
    t.true((await scrollWidth(page)) <= 390, 'no sideways scrolling at 390 px');
    t.deepEqual(await layoutProblems(page), [], 'at 390 px');
    await page.setViewportSize({ width: 1280, height: 720 });
    t.deepEqual(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]), [
      0,
      0,
      '',
    ]);
    t.deepEqual(pageErrors, []);
  },
);

test.serial(
  'a switch of network or account clears the previous account and signs nothing; Log out ends the token',
  async (t) => {
    const { service } = t.context;
    if (journey === undefined) return t.fail('the first test did not leave its page');
    const { context, page, wallet, apiRequests, token, address, pageErrors } = journey;
    t.teardown(() => context.close());
    const leftovers = async () => ({
      agentRows: await page.locator('#agents-list [data-agent]').count(),
      withdrawOptions: await page.locator('#withdraw-agent option').count(),
      paymentRows: await page.locator('#payments-table tbody td[data-label]').count(),
      messages: await page.evaluate(() =>
        ['deposit-status', 'withdraw-status', 'wallet-status']
          .map((id) => document.getElementById(id)?.textContent ?? '')
          .filter((text) => text !== ''),
      ),
      balances: /\d\.\d+ USDC/.test((await page.locator('main').textContent()) ?? ''),
      manage: await page.locator('#manage').isVisible(),
      session: await page.locator('#session').textContent(),
    });
    const cleared = {
      agentRows: 0,
      withdrawOptions: 0,
      paymentRows: 0,
      messages: [],
      balances: false,
      manage: false,
      session: 'Not logged in',
    };

    // The network changes in Freighter, and the user submits a deposit before the page polled the wallet.
    const first = token();
    t.is(await tokenStatus(service, first), 200);
    const [asked, sent] = [wallet.requests.length, apiRequests.length];
    wallet.walletPassphrase = TESTNET;
    await page.locator('#deposit-amount').fill('1');
    await page.locator('#deposit-form').evaluate((form) => (form as HTMLFormElement).requestSubmit());
    await page.locator('#network-warning').waitFor({ state: 'visible' });
    await page.locator('#session').filter({ hasText: 'Not logged in' }).waitFor();
    t.deepEqual(await leftovers(), cleared, 'nothing of the session on the old network remains');
    const signing = wallet.requests.slice(asked).filter((r) => /^SUBMIT_/.test(r.type));
    t.deepEqual(signing, [], 'no signature request was sent for the wrong network');
    t.false(apiRequests.slice(sent).includes('POST /api/deposit/prepare'), 'and no proof was spent');
    await t.notThrowsAsync(async () => {
      for (let i = 0; (await tokenStatus(service, first)) !== 401; i++) {
        if (i > 100) throw new Error('the token still works');
        await new Promise((r) => setTimeout(r, 100));
      }
    }, 'the session was ended on the server');

    // Back on the sandbox, log in again: the account's agents come back.
    wallet.walletPassphrase = service.networkPassphrase;
    await page.locator('#network-warning').waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator(`#agents-list [data-agent="${address}"]`).waitFor();
    const second = token();
    t.not(second, first);

    // Another account in Freighter: none of the first account's ids, balances or messages remain.
    const other = Keypair.random();
    wallet.keypair = other;
    await page.locator(`#address [data-full="${other.publicKey()}"]`).waitFor();
    await page.locator('#session').filter({ hasText: 'Not logged in' }).waitFor();
    t.deepEqual(await leftovers(), cleared);
    const text = await page.content();
    t.false(text.includes(address), "the first account's address and agent id are gone");
    t.false(text.includes('web-savings'));
    t.regex((await page.locator('#wallet-notice').textContent()) ?? '', /switched to account/);
    for (let i = 0; (await tokenStatus(service, second)) !== 401; i++) {
      if (i > 100) return t.fail("the first account's token still works");
      await new Promise((r) => setTimeout(r, 100));
    }

    // The new account logs in, then out: its token answers 401 at once, and the page holds nothing of it.
    await page.getByRole('button', { name: 'Log in' }).click();
    await page
      .locator('#session')
      .filter({ hasText: /^Logged in$/ })
      .waitFor();
    const third = token();
    t.is(await tokenStatus(service, third), 200);
    t.true(
      await page.getByRole('button', { name: 'Connect Freighter' }).isDisabled(),
      'no Connect while logged in',
    );
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.locator('#wallet-notice').filter({ hasText: 'Logged out' }).waitFor();
    t.is(await tokenStatus(service, third), 401, 'the old token answers 401 after Log out');
    t.is(await page.locator('#session').textContent(), 'Not logged in');
    t.true(await page.getByRole('button', { name: 'Log out' }).isDisabled());
    t.deepEqual(pageErrors, []);
  },
);

test.serial(
  'a wallet on another network is refused; refusals are one plain sentence; a refused signature cancels the prepared deposit',
  async (t) => {
    const { service } = t.context;
    const wrong = await openPage(t, TESTNET);
    t.teardown(() => wrong.context.close());
    await wrong.page.locator('#proxy-network').filter({ hasText: 'stellar:local' }).waitFor();
    await wrong.page.getByRole('button', { name: 'Connect Freighter' }).click();
    const warning = wrong.page.locator('#network-warning');
    await warning.waitFor({ state: 'visible' });
    const notice = (await warning.textContent()) ?? '';
    t.regex(notice, /Wrong network.*Test SDF Network ; September 2015.*Standalone/);
    // It names what to add in the wallet: the network's RPC URL and passphrase.
    const info = await (await fetch(`${service.proxyUrl}/api/pool/info`)).json();
    t.true(notice.includes(`RPC URL: ${info.rpcUrl}`), notice);
    t.true(notice.includes(`Passphrase: ${service.networkPassphrase}`), notice);
    await wrong.page.setViewportSize({ width: 390, height: 844 });
    await screenshot(wrong.page, 'wrong-network-390', '#wallet');
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
    await page
      .locator('#session')
      .filter({ hasText: /^Logged in$/ })
      .waitFor();

    // A malformed amount: one sentence naming the field, said once, and nothing moved.
    await page.locator('#deposit-amount').fill('ten');
    await page.getByRole('button', { name: 'Deposit' }).click();
    const invalid = await problemOf(page, 'deposit');
    t.is(invalid.title, 'Check the form');
    t.regex(invalid.detail, /^Amount: /);
    t.is(invalid.moved, NOTHING_MOVED);
    const box = (await page.locator('#deposit-problem').textContent()) ?? '';
    t.is(box.split(invalid.detail).length, 2, 'the sentence is said once');

    // More USDC than the wallet holds: the ledger refuses the simulated deposit.
    await page.locator('#deposit-amount').fill('5');
    await page.getByRole('button', { name: 'Deposit' }).click();
    await page
      .locator('#deposit-problem')
      .filter({ hasNotText: 'Check the form' })
      .waitFor({ timeout: CONFIRM_MS });
    const refused = await problemOf(page, 'deposit');
    t.not(refused.title, '');
    t.not(refused.detail, '');
    const text = (await page.locator('#deposit-problem').textContent()) ?? '';
    t.notRegex(text, /[{}]|\bat \S+:\d+/, 'no raw JSON or stack trace');
    t.is(refused.moved, NOTHING_MOVED);
    t.log(`refused deposit: ${refused.title} — ${refused.detail}`);

    // The user declines the signature in the wallet: the page cancels the prepared deposit at once.
    await service.fund(wallet.keypair.publicKey(), 20);
    wallet.declineNextSignature = true;
    const preparing = page.waitForResponse((r) => r.url().endsWith('/api/deposit/prepare'), {
      timeout: CONFIRM_MS,
    });
    const cancelling = page.waitForResponse((r) => r.request().method() === 'DELETE', {
      timeout: CONFIRM_MS,
    });
    await page.locator('#deposit-amount').fill('5');
    await page.getByRole('button', { name: 'Deposit' }).click();
    const prepared = await (await preparing).json();
    t.is((await cancelling).url(), `${service.proxyUrl}/api/deposit/prepare/${prepared.prepareId}`);
    await page.locator('#deposit-problem').filter({ hasText: 'Wallet' }).waitFor({ timeout: CONFIRM_MS });
    t.deepEqual(await problemOf(page, 'deposit'), {
      title: 'Wallet: transaction signature refused',
      detail: 'The user rejected this request. The prepared deposit was cancelled.',
      moved: NOTHING_MOVED,
    });
    // Checked through the API: even correctly signed, the prepared deposit can no longer be submitted.
    const tx = TransactionBuilder.fromXDR(prepared.transactionXDR, service.networkPassphrase);
    tx.sign(wallet.keypair);
    const late = await fetch(`${service.proxyUrl}/api/deposit/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${right.token()}` },
      body: JSON.stringify({ prepareId: prepared.prepareId, signedTransactionXDR: tx.toXDR() }),
    });
    t.is(late.status, 409);
    const problem = await late.json();
    t.is(problem.code, 'prepare_cancelled');
    t.regex(problem.detail, /cancelled/);
    t.is(await service.usdcBalance(wallet.keypair.publicKey()), 20n * USDC, 'nothing was taken');
  },
);

test.serial('without the Freighter extension, the page says so on load, with a link', async (t) => {
  const { service, browser } = t.context;
  const context = await browser.newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && pageErrors.push(m.text()));
  await page.goto(service.proxyUrl);
  // freighter-api waits for the extension's answer to its status request, then reports it absent.
  const missing = page.locator('#wallet-missing');
  await missing.waitFor({ state: 'visible' });
  t.regex((await missing.textContent()) ?? '', /Freighter not found/);
  t.is(await missing.getByRole('link').getAttribute('href'), 'https://www.freighter.app/');
  await checkLayout(t, page);
  t.true(await page.locator('#wallet-checking').isHidden(), 'the search for it is over');
  await screenshot(page, 'freighter-missing', '#wallet');
  // Connect points at that box instead of saying it again.
  await page.getByRole('button', { name: 'Connect Freighter' }).click();
  await page.locator('#wallet-missing:focus').waitFor();
  t.true(await page.locator('#wallet-problem').isHidden());
  t.is(((await page.locator('body').innerText()).match(/Freighter not found/g) ?? []).length, 1, 'said once');
  t.is(await page.locator('#address').textContent(), 'not connected');
  t.true(await page.getByRole('button', { name: 'Log in' }).isDisabled());
  // The favicon is served: the page has no console error at all.
  t.deepEqual(pageErrors, []);
});
