// The wallet page's controller: connect Freighter, check its network against the proxy's, log in (SEP-53),
// deposit with progress, show each agent as a card, list payments with their receipts, withdraw, show pool
// stats, fund the wallet on the sandbox, and log out; the agent controls (policy, freeze, tokens, export) live in
// manage.ts, the payments waiting for approval in approvals.ts. Every withdrawal is confirmed by a fresh wallet
// signature of the proxy's message naming it (required or not by the agent's policy). Everything shown belongs to the connected, logged-in account: a change of account or network in
// Freighter (watched, and checked again before every signature) or the end of the session clears it and ends
// the token on the server. One action runs at a time; each runs through `guarded`, so any failure is shown as
// one sentence with whether anything moved.
import {
  type AgentBalance,
  api,
  type Confirmable,
  type Confirmation,
  forgetToken,
  friendbot,
  loggedIn,
  type PoolInfo,
} from './api.ts';
import { agentCard } from './agent-cards.ts';
import { loadApprovals, resetApprovals, wireApprovals } from './approvals.ts';
import { loadConsent, resetConsent, wireConsent } from './consent.ts';
import { copyButton, shortened } from './copy.ts';
import { $, clearProblem, el, setStatus, showProblem } from './dom.ts';
import { dateTime, shortAddress, usdc } from './format.ts';
import {
  agentsChanged,
  loadPolicies,
  policyOf,
  resetManage,
  selectAgent,
  selectedAgent,
  setManageEnabled,
  wireManage,
} from './manage.ts';
import { withdrawWarnings } from './privacy.ts';
import { emptyRow, renderPayments, transactionRef } from './payments-table.ts';
import { explain, outcomeUnknown, Problem, toProblem } from './problem.ts';
import {
  connect,
  freighterPresent,
  readWallet,
  sameWallet,
  signText,
  signTx,
  type Wallet,
  watchWallet,
} from './wallet.ts';

const FUND_USDC = 100;
/** Sections with a problem box, and those of them with a status line. */
const SECTIONS = [
  'consent',
  'wallet',
  'approvals',
  'deposit',
  'agents',
  'withdraw',
  'payments',
  'policy',
  'freeze',
  'tokens',
  'export',
] as const;
const STATUS_SECTIONS = ['wallet', 'deposit', 'withdraw'] as const;

interface State {
  info?: PoolInfo;
  wallet?: Wallet;
  /** The wallet the token was issued to. */
  session?: Wallet;
  /** An action (login, deposit, withdrawal, funding, logout) is running. */
  busy: boolean;
  /** Bumped whenever the account's data is cleared: results of older requests are dropped. */
  epoch: number;
  /** The session's token is ended once the running action has cleaned up (cancelled its prepared deposit). */
  endSessionAfterAction: boolean;
  agents: AgentBalance[];
  /** Amounts this page deposited, per agent (for the withdrawal warning). */
  deposits: Map<string, string[]>;
  stopWatching?: () => void;
}

const state: State = {
  busy: false,
  epoch: 0,
  endSessionAfterAction: false,
  agents: [],
  deposits: new Map(),
};

function networkMatches(): boolean {
  return state.info !== undefined && state.wallet?.networkPassphrase === state.info.networkPassphrase;
}

function sessionActive(): boolean {
  return loggedIn() && !state.endSessionAfterAction && sameWallet(state.session, state.wallet);
}

/** Enables exactly the actions that make sense now (connected, right network, logged in, nothing running). */
function refreshControls(): void {
  const connected = state.wallet !== undefined && state.wallet.address !== '';
  const usable = connected && networkMatches();
  const session = usable && sessionActive();
  const idle = !state.busy;
  $<HTMLButtonElement>('connect').disabled = !idle || session;
  $<HTMLButtonElement>('login').disabled = !idle || !usable || session;
  $<HTMLButtonElement>('logout').disabled = !idle || !session;
  $<HTMLButtonElement>('fund').hidden = !(state.info?.friendbotUrl && connected);
  $<HTMLButtonElement>('fund').disabled = !idle || !usable;
  for (const id of ['deposit-submit', 'withdraw-submit'])
    $<HTMLButtonElement>(id).disabled = !idle || !session;
  for (const id of ['agents-refresh', 'payments-refresh']) $<HTMLButtonElement>(id).disabled = !session;
  setManageEnabled(idle && session);
  const badge = $('session');
  badge.textContent = session ? 'Logged in' : 'Not logged in';
  badge.title = session ? 'The token is kept in this page only: reloading or closing it logs you out.' : '';
  badge.className = session ? 'badge badge-ok' : 'badge';
}

/** Thrown by an action that finds the account or network changed under it. */
class WalletChanged extends Problem {
  constructor() {
    super(
      'Freighter changed account or network',
      'The action was stopped before anything was signed.',
      'wallet_changed',
    );
  }
}

/**
 * Runs one action of `section`. Failures show in the section, unless the account changed meanwhile (then the
 * section belongs to the previous account and was cleared). `exclusive` actions run one at a time.
 */
async function guarded(section: string, action: () => Promise<void>, exclusive = false): Promise<void> {
  if (exclusive && state.busy) return;
  const epoch = state.epoch;
  clearProblem(section);
  if (exclusive) state.busy = true;
  refreshControls();
  $(section).setAttribute('aria-busy', 'true');
  try {
    await action();
  } catch (error) {
    const problem = explain(toProblem(error));
    if (epoch === state.epoch && !(error instanceof WalletChanged)) {
      setStatus(section, '');
      showProblem(section, problem);
    }
    // The token expired or was ended elsewhere: nothing of the account stays on screen.
    if (problem.code === 'unauthorized' && problem.status === 401 && epoch === state.epoch)
      await clearAccount('Your session ended (it expired or was ended elsewhere): log in again.', false);
  } finally {
    $(section).removeAttribute('aria-busy');
    if (exclusive) {
      state.busy = false;
      if (state.endSessionAfterAction) await endSession();
    }
    refreshControls();
  }
}

/** Ends the token on the server (best effort: a token that cannot be ended here still expires there). */
async function endSession(): Promise<void> {
  state.endSessionAfterAction = false;
  state.session = undefined;
  await api.logout().catch(() => forgetToken());
}

function setNotice(text: string): void {
  const notice = $('wallet-notice');
  notice.textContent = text;
  notice.hidden = text === '';
}

/**
 * Clears everything shown for the account (agents, balances, payments, messages, forms) and ends its session
 * — at once, or after the running action cleaned up — then shows `notice`.
 */
async function clearAccount(notice: string, revoke = true): Promise<void> {
  state.epoch++;
  state.session = undefined;
  state.agents = [];
  state.deposits.clear();
  resetManage();
  resetApprovals();
  resetConsent();
  renderAgents([]);
  renderPayments([], 'Log in to see your payments.');
  for (const section of SECTIONS) clearProblem(section);
  for (const section of STATUS_SECTIONS) setStatus(section, '');
  $<HTMLFormElement>('deposit-form').reset();
  $<HTMLFormElement>('withdraw-form').reset();
  $('deposit-progress').hidden = true;
  $('withdraw-progress').hidden = true;
  updateWithdrawWarning();
  setNotice(notice);
  if (!revoke) forgetToken();
  else if (state.busy) state.endSessionAfterAction = true;
  else await endSession();
  refreshControls();
}

function showWallet(wallet: Wallet | undefined): void {
  const address = $('address');
  if (wallet?.address) address.replaceChildren(shortened(wallet.address, 'wallet address'));
  else address.textContent = 'not connected';
  $('wallet-network').textContent = wallet?.address
    ? `${wallet.network || 'custom'} (${wallet.networkPassphrase})`
    : '—';
  const warning = $('network-warning');
  const wrong = wallet?.address && state.info && !networkMatches();
  warning.hidden = !wrong;
  warning.replaceChildren();
  if (wrong) warning.append(...networkNotice(wallet.networkPassphrase, state.info!));
}

/** What to add in Freighter to reach the proxy's network: its RPC URL and passphrase, each with Copy. */
function networkNotice(walletPassphrase: string, info: PoolInfo): HTMLElement[] {
  const fact = (label: string, value: string, what: string) => {
    const line = el('p');
    line.append(el('span', `${label}: `), el('code', value, 'mono'), ' ', copyButton(value, what));
    return line;
  };
  return [
    el('strong', 'Wrong network.'),
    el(
      'p',
      `Freighter is on "${walletPassphrase}", but this proxy runs on "${info.networkPassphrase}". In Freighter, ` +
        'open Settings → Network, add a network with these values (or pick it if you have it), and select it. ' +
        'Login and deposits stay disabled until then.',
    ),
    fact('RPC URL', info.rpcUrl, 'RPC URL'),
    fact('Passphrase', info.networkPassphrase, 'network passphrase'),
  ];
}

/** Freighter now reports `next`: anything shown for another account or network goes. */
async function walletChanged(next: Wallet): Promise<void> {
  if (sameWallet(next, state.wallet)) return;
  const before = state.wallet;
  state.wallet = next;
  showWallet(next);
  const what =
    next.address === ''
      ? 'Freighter is locked or no longer shares an account with this page: connect again.'
      : before?.address !== next.address
        ? `Freighter switched to account ${shortAddress(next.address)}.`
        : `Freighter switched to the network "${next.networkPassphrase}".`;
  const hadSession = loggedIn();
  await clearAccount(
    hadSession
      ? `${what} Everything shown for the previous account was cleared and its session ended: log in again.`
      : what,
  );
}

/** Asks Freighter afresh; refuses (and clears the page) when its account or network is not the one shown. */
async function confirmWallet(): Promise<Wallet> {
  const now = await readWallet();
  if (!sameWallet(now, state.wallet)) {
    await walletChanged(now);
    throw new WalletChanged();
  }
  if (!networkMatches())
    throw new Problem(
      'Wrong network',
      `Your wallet is on "${now.networkPassphrase}" but this proxy runs on "${state.info?.networkPassphrase}".`,
      'wrong_network',
    );
  return now;
}

/** Throws when the account changed since `epoch` (the action's result would belong to another account). */
function stillCurrent(epoch: number): void {
  if (epoch !== state.epoch) throw new WalletChanged();
}

async function loadInfo(): Promise<void> {
  state.info = await api.poolInfo();
  $('proxy-network').textContent = `${state.info.network} (${state.info.networkPassphrase})`;
  $('stat-pool').replaceChildren(shortened(state.info.contracts.pool, 'pool contract id'));
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
            const size = b.payments;
            return `${size} payment${size === 1 ? '' : 's'} at ${dateTime(b.executedAt)}`;
          })
          .join('; ');
}

async function onConnect(): Promise<void> {
  if (!state.info) await loadInfo();
  let wallet: Wallet;
  try {
    wallet = await connect();
  } catch (error) {
    if (!(error instanceof Problem) || error.code !== 'wallet_missing') throw error;
    // Said once, in the box shown on load: point at it instead of repeating it.
    showFreighterMissing();
    $('wallet-missing').focus();
    return;
  }
  $('wallet-missing').hidden = true;
  await walletChanged(wallet);
  setNotice('');
  state.stopWatching ??= watchWallet((next) => void walletChanged(next));
  if (networkMatches()) setStatus('wallet', 'Wallet connected. Log in to use the pool.', true);
  // On another network, the notice above says what to do; a second message would only repeat it.
  else setStatus('wallet', '');
}

async function onFund(): Promise<void> {
  const { address } = await confirmWallet();
  const url = state.info?.friendbotUrl;
  if (!url) throw new Problem('No friendbot', 'Only the sandbox ledger can fund wallets.', 'no_friendbot');
  setStatus('wallet', 'Asking the sandbox friendbot…');
  await friendbot(url, address, FUND_USDC);
  setStatus('wallet', `Funded: the sandbox sent test XLM and ${FUND_USDC} test USDC to your wallet.`, true);
}

async function onLogin(): Promise<void> {
  const epoch = state.epoch;
  const wallet = await confirmWallet();
  const { challenge } = await api.challenge(wallet.address);
  stillCurrent(epoch);
  await confirmWallet();
  setStatus('wallet', 'Sign the login message in Freighter…');
  const signature = await signText(challenge, wallet);
  stillCurrent(epoch);
  await api.verify(wallet.address, challenge, signature);
  if (epoch !== state.epoch) {
    // The account changed while the login was signed: that token is not this account's.
    await api.logout().catch(() => forgetToken());
    throw new WalletChanged();
  }
  state.session = wallet;
  setNotice('');
  setStatus('wallet', 'Logged in.', true);
  refreshControls();
  void guarded('agents', loadAgents);
  void guarded('payments', loadPayments);
  void guarded('stats', loadStats);
}

/** Has the wallet sign the proxy's message confirming `action` of `agentId` (a withdrawal, or a loosening). */
async function confirmWithWallet(agentId: string, action: Confirmable): Promise<Confirmation> {
  const epoch = state.epoch;
  await confirmWallet();
  const { message, nonce } = await api.walletConfirmation(agentId, action);
  stillCurrent(epoch);
  // Freighter is asked again right before it signs: another account or network gets no request.
  const wallet = await confirmWallet();
  const signature = await signText(message, wallet);
  stillCurrent(epoch);
  return { nonce, signature };
}

/** Shows the one "Freighter not found" box (on load, or when Connect finds no extension). */
function showFreighterMissing(): void {
  $('wallet-checking').hidden = true;
  const box = $('wallet-missing');
  box.tabIndex = -1;
  box.hidden = false;
}

/** A confirmation with its transaction: linked to the explorer where the network has one, else with Copy. */
function confirmWithTransaction(section: string, text: string, hash: string): void {
  setStatus(section, `${text} `, true);
  $(`${section}-status`).append(transactionRef(hash, state.info?.payments.x402Network ?? ''));
}

async function onLogout(): Promise<void> {
  await endSession();
  await clearAccount('Logged out: the token was ended on the server.');
}

/** What happens after each step, said while it runs. */
const NEXT: Record<string, string> = {
  prove: 'This takes a few seconds; then Freighter asks you to sign the deposit.',
  sign: 'Approve the transaction in Freighter: nothing leaves your wallet until you do.',
  submit: 'The ledger confirms in a few seconds; your agent’s balance updates then.',
};

function markStep(step: string | undefined): void {
  $('deposit-next').textContent = step === undefined ? '' : (NEXT[step] ?? '');
  const order = ['prove', 'sign', 'submit'];
  const at = step === undefined ? order.length : order.indexOf(step);
  for (const li of $('deposit-steps').querySelectorAll<HTMLLIElement>('li')) {
    const mine = order.indexOf(li.dataset.step ?? '');
    li.classList.toggle('active', mine === at);
    li.classList.toggle('done', mine < at);
    if (mine === at) $('deposit-step').textContent = `${li.textContent ?? ''}…`;
  }
}

function registrationWait(): string {
  const seconds = state.info?.registrationWaitMaxSeconds ?? 60;
  return (
    "This is a new agent: its key is first added to the pool's allowlist in the next registration slot, " +
    `then the proof runs: at most about ${seconds} seconds in all.`
  );
}

/** How often the page retries a prepare the proxy answered `registration_pending` (the key stays queued). */
const REGISTRATION_RETRIES = 3;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Prepares the deposit, waiting for the new agent's registration slot when the proxy says it is pending. */
async function prepareWithRegistration(
  epoch: number,
  wallet: Wallet,
  amount: string,
  agentId: string | undefined,
): Promise<{ prepareId: string; transactionXDR: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await api.prepareDeposit(wallet.address, amount, agentId);
    } catch (error) {
      const problem = toProblem(error);
      if (problem.code !== 'registration_pending' || attempt > REGISTRATION_RETRIES) throw problem;
      const at = Date.parse(problem.retryAt ?? '') || Date.now() + 10_000;
      const wait = $('deposit-wait');
      wait.textContent =
        "The new agent's allowlist registration is scheduled: the deposit continues by about " +
        `${new Date(at).toLocaleTimeString()}.`;
      wait.hidden = false;
      await sleep(Math.max(1000, at - Date.now()));
      stillCurrent(epoch);
    }
  }
}

/** Cancels a prepared deposit that will not be signed; whether the proxy confirmed it. */
async function cancelPrepared(prepareId: string): Promise<boolean> {
  try {
    await api.cancelDeposit(prepareId);
    return true;
  } catch {
    return false;
  }
}

async function onDeposit(): Promise<void> {
  const epoch = state.epoch;
  // Checked before proving, so a changed wallet costs no proof.
  const wallet = await confirmWallet();
  const amount = $<HTMLInputElement>('deposit-amount').value.trim();
  const agentId = $<HTMLInputElement>('deposit-agent').value.trim() || wallet.address;
  setStatus('deposit', '');
  const progress = $('deposit-progress');
  const wait = $('deposit-wait');
  wait.textContent = registrationWait();
  const isNew = !state.agents.some((a) => a.agentId === agentId);
  wait.hidden = !isNew;
  progress.hidden = false;
  const started = Date.now();
  let prepareId: string | undefined;
  try {
    markStep('prove');
    const prepared = await prepareWithRegistration(
      epoch,
      wallet,
      amount,
      agentId === wallet.address ? undefined : agentId,
    );
    prepareId = prepared.prepareId;
    wait.hidden = true;
    stillCurrent(epoch);
    markStep('sign');
    // Freighter is asked again right before it signs: another account or network gets no request.
    await confirmWallet();
    let signed: string;
    try {
      signed = await signTx(prepared.transactionXDR, wallet);
    } catch (error) {
      const problem = toProblem(error);
      const cancelled = await cancelPrepared(prepared.prepareId);
      prepareId = undefined;
      throw new Problem(
        problem.title,
        `${problem.detail} ${cancelled ? 'The prepared deposit was cancelled.' : ''}`.trim(),
        problem.code,
      );
    }
    stillCurrent(epoch);
    markStep('submit');
    const submitting = prepareId;
    prepareId = undefined;
    let result;
    try {
      result = await api.submitDeposit(submitting, signed);
    } catch (error) {
      const problem = toProblem(error);
      if (outcomeUnknown(problem)) problem.moved = 'unknown';
      throw problem;
    }
    stillCurrent(epoch);
    markStep(undefined);
    const credited = result.amount ?? amount;
    state.deposits.set(agentId, [...(state.deposits.get(agentId) ?? []), credited]);
    $<HTMLFormElement>('deposit-form').reset();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const to = agentId === wallet.address ? 'your wallet agent' : shortAddress(agentId);
    confirmWithTransaction(
      'deposit',
      `Deposit confirmed: ${usdc(credited)} USDC to ${to} in ${seconds} s.`,
      result.txHash,
    );
  } finally {
    // A deposit prepared but never signed (the wallet changed, or the page stopped) is cancelled now.
    if (prepareId !== undefined) await cancelPrepared(prepareId);
    progress.hidden = true;
    wait.hidden = true;
  }
  if (isNew) await requireSignatureOf(agentId);
  void guarded('agents', loadAgents);
  void guarded('stats', loadStats);
}

/**
 * A new agent's withdrawals need the wallet's signature from the start: when its owner has set nothing of its
 * policy yet, the page turns the requirement on (tightening needs no signature; turning it off later does).
 * Best effort: the deposit is done either way, and the policy form shows what holds.
 */
async function requireSignatureOf(agentId: string): Promise<void> {
  try {
    const view = await api.policy(agentId);
    const untouched =
      !view.requireWithdrawalSignature &&
      [
        view.perPaymentCap,
        view.budgetPerHour,
        view.budgetPerDay,
        view.budgetPer30Days,
        view.approvalThreshold,
      ].every((v) => v === null) &&
      view.allowedServices.length + view.deniedServices.length + view.withdrawalDestinations.length === 0;
    if (untouched) await api.setPolicy(agentId, { requireWithdrawalSignature: true });
  } catch {
    // Not set: the agent controls still offer it.
  }
}

function drawAgentCards(): void {
  const list = $('agents-list');
  const selected = selectedAgent();
  list.replaceChildren(
    ...state.agents.map((a) =>
      agentCard(a, policyOf(a.agentId), a.agentId === selected, (id) => selectAgent(id, true)),
    ),
  );
  if (state.agents.length === 0)
    list.append(
      el('li', sessionActive() ? 'No agents yet: deposit first.' : 'Log in to see your agents.', 'empty'),
    );
}

function renderAgents(agents: AgentBalance[]): void {
  state.agents = agents;
  agentsChanged(agents.map((a) => a.agentId));
  drawAgentCards();
  const select = $<HTMLSelectElement>('withdraw-agent');
  const previous = select.value;
  select.replaceChildren(
    ...agents.map((a) => {
      const option = el('option', `${shortAddress(a.agentId)} (${usdc(a.balance)} ${a.currency})`);
      option.value = a.agentId;
      return option;
    }),
  );
  if (agents.some((a) => a.agentId === previous)) select.value = previous;
  updateWithdrawWarning();
}

async function loadAgents(): Promise<void> {
  const epoch = state.epoch;
  if (state.agents.length === 0) $('agents-list').replaceChildren(el('li', 'Loading your agents…', 'empty'));
  void guarded('approvals', loadApprovals);
  const { agents } = await api.agents();
  if (epoch !== state.epoch) return;
  renderAgents(agents);
  void guarded('consent', () => loadConsent(agents.map((a) => a.agentId)));
  await loadPolicies(agents.map((a) => a.agentId));
  const selected = selectedAgent();
  if (selected !== undefined) selectAgent(selected);
}

async function loadPayments(): Promise<void> {
  const epoch = state.epoch;
  const body = $('payments-table').querySelector('tbody')!;
  if (body.querySelector('tr[data-payment]') === null) body.replaceChildren(emptyRow('Loading payments…', 6));
  const { payments } = await api.payments(20);
  if (epoch === state.epoch)
    renderPayments(payments, sessionActive() ? 'No payments yet.' : 'Log in to see your payments.');
}

/** Shows what the withdrawal as typed would reveal, before it is sent. */
function updateWithdrawWarning(): void {
  const agentId = $<HTMLSelectElement>('withdraw-agent').value;
  const warnings = withdrawWarnings({
    destination: $<HTMLInputElement>('withdraw-destination').value,
    amount: $<HTMLInputElement>('withdraw-amount').value,
    depositor: state.wallet?.address || undefined,
    agentBalance: state.agents.find((a) => a.agentId === agentId)?.balance,
    deposits: state.deposits.get(agentId) ?? [],
  });
  const box = $('withdraw-warning');
  box.replaceChildren(...warnings.map((w) => el('p', w)));
  box.hidden = warnings.length === 0;
  $('withdraw-submit').textContent = warnings.length === 0 ? 'Withdraw' : 'Withdraw anyway';
}

async function onWithdraw(): Promise<void> {
  const epoch = state.epoch;
  const { address } = await confirmWallet();
  const agentId = $<HTMLSelectElement>('withdraw-agent').value || address;
  const amount = $<HTMLInputElement>('withdraw-amount').value.trim();
  const destination = $<HTMLInputElement>('withdraw-destination').value.trim();
  setStatus('withdraw', 'Confirm the withdrawal: sign its message in Freighter…');
  const confirmation = await confirmWithWallet(agentId, { withdraw: { amount, destination } });
  setStatus('withdraw', '');
  const progress = $('withdraw-progress');
  progress.hidden = false;
  try {
    let result;
    try {
      result = await api.withdraw(amount, destination, agentId, confirmation);
    } catch (error) {
      const problem = toProblem(error);
      if (outcomeUnknown(problem)) problem.moved = 'unknown';
      throw problem;
    }
    stillCurrent(epoch);
    $<HTMLFormElement>('withdraw-form').reset();
    updateWithdrawWarning();
    confirmWithTransaction(
      'withdraw',
      `Withdrawal confirmed: ${usdc(result.amount)} USDC to ${shortAddress(result.destination)}.`,
      result.txHash,
    );
  } finally {
    progress.hidden = true;
  }
  void guarded('agents', loadAgents);
  void guarded('stats', loadStats);
}

/** On load: say at once when the extension is missing, instead of after a click. */
async function checkFreighter(): Promise<void> {
  const present = await freighterPresent();
  $('wallet-checking').hidden = true;
  if (!present && state.wallet === undefined) showFreighterMissing();
}

function wire(): void {
  $('connect').addEventListener('click', () => void guarded('wallet', onConnect, true));
  $('fund').addEventListener('click', () => void guarded('wallet', onFund, true));
  $('login').addEventListener('click', () => void guarded('wallet', onLogin, true));
  $('logout').addEventListener('click', () => void guarded('wallet', onLogout, true));
  $('deposit-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void guarded('deposit', onDeposit, true);
  });
  $('withdraw-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void guarded('withdraw', onWithdraw, true);
  });
  for (const id of ['withdraw-agent', 'withdraw-amount', 'withdraw-destination'])
    $(id).addEventListener('input', updateWithdrawWarning);
  $('agents-refresh').addEventListener('click', () => void guarded('agents', loadAgents));
  $('payments-refresh').addEventListener('click', () => void guarded('payments', loadPayments));
  $('stats-refresh').addEventListener('click', () => void guarded('stats', loadStats));
  wireManage({
    guarded: (section, action) => guarded(section, action),
    epoch: () => state.epoch,
    redraw: drawAgentCards,
    confirm: confirmWithWallet,
  });
  wireConsent({ guarded: (section, action) => guarded(section, action) });
  wireApprovals({
    epoch: () => state.epoch,
    refresh: () => {
      void guarded('agents', loadAgents);
      void guarded('payments', loadPayments);
    },
  });
  renderAgents([]);
  renderPayments([], 'Log in to see your payments.');
  refreshControls();
  void guarded('wallet', loadInfo);
  void guarded('stats', loadStats);
  void checkFreighter();
}

wire();
