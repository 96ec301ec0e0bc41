// The wallet page's controller: connect Freighter, check its network against the proxy's, log in (SEP-53),
// deposit with progress, list agents and payments, withdraw, show pool stats, and fund the wallet on the
// sandbox. Each action runs through `guarded`, so any failure is shown as a problem's title and detail.
import { type AgentBalance, api, friendbot, loggedIn, logout, type Payment, type PoolInfo } from './api.ts';
import { $, clearProblem, el, setStatus, shortAddress, showProblem } from './dom.ts';
import { Problem, toProblem } from './problem.ts';
import { connect, signLogin, signTx } from './wallet.ts';

const FUND_USDC = 100;

interface State {
  info?: PoolInfo;
  address?: string;
  walletPassphrase?: string;
}

const state: State = {};

function networkMatches(): boolean {
  return state.info !== undefined && state.walletPassphrase === state.info.networkPassphrase;
}

/** Enables exactly the actions that make sense now (connected, right network, logged in). */
function refreshControls(): void {
  const connected = state.address !== undefined;
  const usable = connected && networkMatches();
  const session = usable && loggedIn();
  $<HTMLButtonElement>('login').disabled = !usable;
  $<HTMLButtonElement>('fund').hidden = !(state.info?.friendbotUrl && connected);
  $<HTMLButtonElement>('fund').disabled = !usable;
  for (const id of ['deposit-submit', 'withdraw-submit', 'agents-refresh', 'payments-refresh'])
    $<HTMLButtonElement>(id).disabled = !session;
  $('session').textContent = session ? 'logged in (token kept in this page only)' : 'not logged in';
}

async function guarded(
  section: string,
  action: () => Promise<void>,
  button?: HTMLButtonElement,
): Promise<void> {
  clearProblem(section);
  if (button) button.disabled = true;
  $(section).setAttribute('aria-busy', 'true');
  try {
    await action();
  } catch (error) {
    showProblem(section, toProblem(error));
  } finally {
    $(section).removeAttribute('aria-busy');
    refreshControls();
  }
}

async function loadInfo(): Promise<void> {
  state.info = await api.poolInfo();
  $('proxy-network').textContent = `${state.info.network} (${state.info.networkPassphrase})`;
  $('stat-pool').textContent = state.info.contracts.pool;
}

async function loadStats(): Promise<void> {
  const stats = await api.poolStats();
  $('stat-agents').textContent = String(stats.activeAgents);
  $('stat-transactions').textContent = String(stats.totalTransactions);
  $('stat-services').textContent = String(stats.servicesUsed);
  $('stat-batches').textContent =
    stats.recentBatches.length === 0
      ? 'none yet'
      : stats.recentBatches
          .slice(0, 5)
          .map((b) => {
            const size = b.size;
            return `${size} payment${size === 1 ? '' : 's'} at ${new Date(b.executedAt).toLocaleString()}`;
          })
          .join('; ');
}

function requireUsableWallet(): { address: string; passphrase: string } {
  if (!state.address || !state.walletPassphrase)
    throw new Problem('No wallet', 'Connect Freighter first.', 'wallet');
  if (!networkMatches())
    throw new Problem(
      'Wrong network',
      `Your wallet is on "${state.walletPassphrase}" but this proxy runs on "${state.info?.networkPassphrase}".`,
      'wrong_network',
    );
  return { address: state.address, passphrase: state.walletPassphrase };
}

async function onConnect(): Promise<void> {
  if (!state.info) await loadInfo();
  const wallet = await connect();
  // Another account (or network) than the logged-in one: its token must not be used for this one.
  if (wallet.address !== state.address || wallet.networkPassphrase !== state.walletPassphrase) logout();
  state.address = wallet.address;
  state.walletPassphrase = wallet.networkPassphrase;
  $('address').textContent = wallet.address;
  $('wallet-network').textContent = `${wallet.network || 'custom'} (${wallet.networkPassphrase})`;
  const warning = $('network-warning');
  if (networkMatches()) {
    warning.hidden = true;
    warning.textContent = '';
    setStatus('wallet', 'Wallet connected. Log in to use the pool.', true);
  } else {
    warning.textContent =
      `Wrong network: Freighter is on "${wallet.networkPassphrase}", but this proxy runs on ` +
      `"${state.info!.networkPassphrase}". Switch Freighter's network (Settings → Network) and connect again.`;
    warning.hidden = false;
    setStatus('wallet', 'Wallet connected on another network: login and deposits are disabled.', true);
  }
  const withdrawTo = $<HTMLInputElement>('withdraw-destination');
  if (!withdrawTo.value) withdrawTo.value = wallet.address;
}

async function onFund(): Promise<void> {
  const { address } = requireUsableWallet();
  const url = state.info?.friendbotUrl;
  if (!url) throw new Problem('No friendbot', 'Only the sandbox ledger can fund wallets.', 'no_friendbot');
  setStatus('wallet', 'Asking the sandbox friendbot…');
  await friendbot(url, address, FUND_USDC);
  setStatus('wallet', `Funded: the sandbox sent test XLM and ${FUND_USDC} test USDC to your wallet.`, true);
}

async function onLogin(): Promise<void> {
  const { address, passphrase } = requireUsableWallet();
  setStatus('wallet', 'Sign the login message in Freighter…');
  const { challenge } = await api.challenge(address);
  const signature = await signLogin(challenge, address, passphrase);
  await api.verify(address, challenge, signature);
  setStatus('wallet', 'Logged in.', true);
  refreshControls();
  await Promise.all([
    guarded('agents', loadAgents),
    guarded('payments', loadPayments),
    guarded('stats', loadStats),
  ]);
}

function markStep(step: string | undefined): void {
  for (const li of $('deposit-steps').querySelectorAll<HTMLLIElement>('li')) {
    const order = ['prove', 'sign', 'submit'];
    const at = step === undefined ? order.length : order.indexOf(step);
    const mine = order.indexOf(li.dataset.step ?? '');
    li.classList.toggle('active', mine === at);
    li.classList.toggle('done', mine < at);
    if (mine === at) $('deposit-step').textContent = `${li.textContent ?? ''}…`;
  }
}

async function onDeposit(): Promise<void> {
  const { address, passphrase } = requireUsableWallet();
  const amount = $<HTMLInputElement>('deposit-amount').value.trim();
  const agentId = $<HTMLInputElement>('deposit-agent').value.trim() || undefined;
  setStatus('deposit', '');
  const progress = $('deposit-progress');
  progress.hidden = false;
  const started = Date.now();
  try {
    markStep('prove');
    const prepared = await api.prepareDeposit(address, amount, agentId);
    markStep('sign');
    const signed = await signTx(prepared.transactionXDR, address, passphrase);
    markStep('submit');
    const result = await api.submitDeposit(prepared.prepareId, signed);
    markStep(undefined);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    setStatus(
      'deposit',
      `Deposit confirmed: ${result.amount ?? amount} USDC to ${agentId ?? 'your wallet agent'} in ${seconds} s ` +
        `(transaction ${result.txHash}).`,
      true,
    );
  } finally {
    progress.hidden = true;
  }
  await Promise.all([guarded('agents', loadAgents), guarded('stats', loadStats)]);
}

function emptyRow(text: string, columns: number): HTMLTableRowElement {
  const row = el('tr');
  const cell = el('td', text);
  cell.colSpan = columns;
  row.append(cell);
  return row;
}

function renderAgents(agents: AgentBalance[]): void {
  const body = $('agents-table').querySelector('tbody')!;
  body.replaceChildren(
    ...agents.map((a) => {
      const row = el('tr');
      row.dataset.agent = a.agentId;
      row.append(el('td', a.agentId, 'mono'), el('td', `${a.balance} ${a.currency}`, 'balance'));
      return row;
    }),
  );
  if (agents.length === 0) body.append(emptyRow('No agents yet: deposit first.', 2));
  const select = $<HTMLSelectElement>('withdraw-agent');
  const previous = select.value;
  select.replaceChildren(
    ...agents.map((a) => {
      const option = el('option', `${a.agentId} (${a.balance} ${a.currency})`);
      option.value = a.agentId;
      return option;
    }),
  );
  if (agents.some((a) => a.agentId === previous)) select.value = previous;
}

async function loadAgents(): Promise<void> {
  renderAgents((await api.agents()).agents);
}

function renderPayments(payments: Payment[]): void {
  const body = $('payments-table').querySelector('tbody')!;
  body.replaceChildren(
    ...payments.map((p) => {
      const row = el('tr');
      const receipt = p.receipt
        ? `${p.receipt.amount} ${shortAddress(p.receipt.asset)} to ${shortAddress(p.receipt.payTo)} on ${p.receipt.network}, ` +
          `transaction ${p.receipt.transaction}, settled ${new Date(p.receipt.settledAt).toLocaleString()}`
        : '—';
      row.append(
        el('td', new Date(p.createdAt).toLocaleString()),
        el('td', p.agentId, 'mono'),
        el('td', p.serviceUrl, 'mono'),
        el('td', p.amount),
        el('td', p.paymentStatus),
        el('td', receipt, 'mono'),
      );
      return row;
    }),
  );
  if (payments.length === 0) body.append(emptyRow('No payments yet.', 6));
}

async function loadPayments(): Promise<void> {
  renderPayments((await api.payments(20)).payments);
}

async function onWithdraw(): Promise<void> {
  requireUsableWallet();
  const agentId = $<HTMLSelectElement>('withdraw-agent').value || undefined;
  const amount = $<HTMLInputElement>('withdraw-amount').value.trim();
  const destination = $<HTMLInputElement>('withdraw-destination').value.trim();
  setStatus('withdraw', '');
  const progress = $('withdraw-progress');
  progress.hidden = false;
  try {
    const result = await api.withdraw(amount, destination, agentId);
    setStatus(
      'withdraw',
      `Withdrawal confirmed: ${result.amount} USDC to ${result.destination} (transaction ${result.txHash}).`,
      true,
    );
  } finally {
    progress.hidden = true;
  }
  await Promise.all([guarded('agents', loadAgents), guarded('stats', loadStats)]);
}

function wire(): void {
  const connectButton = $<HTMLButtonElement>('connect');
  connectButton.addEventListener('click', () => void guarded('wallet', onConnect));
  $('fund').addEventListener('click', () => void guarded('wallet', onFund, $<HTMLButtonElement>('fund')));
  $('login').addEventListener('click', () => void guarded('wallet', onLogin, $<HTMLButtonElement>('login')));
  $('deposit-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void guarded('deposit', onDeposit, $<HTMLButtonElement>('deposit-submit'));
  });
  $('withdraw-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void guarded('withdraw', onWithdraw, $<HTMLButtonElement>('withdraw-submit'));
  });
  $('agents-refresh').addEventListener('click', () => void guarded('agents', loadAgents));
  $('payments-refresh').addEventListener('click', () => void guarded('payments', loadPayments));
  $('stats-refresh').addEventListener('click', () => void guarded('stats', loadStats));
  refreshControls();
  void guarded('wallet', loadInfo);
  void guarded('stats', loadStats);
}

wire();
