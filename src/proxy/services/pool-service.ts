// The money flows: wallet deposit (prepare → wallet signs → submit), operator deposit, withdrawal with
// note selection and consolidation. Balances move only when the indexer sees the confirmed events:
// outputs are registered as pending notes before a transaction is sent, and NoteCrediting credits them
// (exactly once, keyed by commitment), so a crash between submit and confirmation loses nothing.
import { randomUUID } from 'node:crypto';
import {
  Address,
  scValToNative,
  FeeBumpTransaction,
  Keypair,
  nativeToScVal,
  type Transaction,
  TransactionBuilder,
} from '@stellar/stellar-sdk';
import { formatAmount } from '../domain/amount.ts';
import { ProblemError } from '../errors.ts';
import type { ProxyMetrics } from '../http/metrics.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import { KeyedMutex } from '../util/keyed-mutex.ts';
import type { Logger } from '../util/logger.ts';
import type { AgentRecord, AgentRegistry } from './agents.ts';
import { AgentKeyring } from './agent-keyring.ts';
import { NoteCrediting } from './note-crediting.ts';
import type { Deployment } from './deployment.ts';
import { type LedgerClient, UncertainOutcome } from './ledger-client.ts';
import type { NoteBook, NoteRecord } from './notebook.ts';
import type { PoolIndexer } from './pool-indexer.ts';
import type { PoolStatsService } from './stats.ts';
import { type AgentCrypto, type PoolTransactionProver, type ProvedTransaction } from './pool-transaction.ts';

interface UncertainSpend {
  agentId: string;
  opId: string;
  txHash: string;
  /** After this, a transaction still not found can no longer land (its time bounds passed). */
  giveUpAt: number;
}

interface PreparedDepositRecord {
  prepareId: string;
  wallet: string;
  agentId: string;
  amount: bigint;
  txHash: string;
  outputs: Array<{ commitment: bigint; amount: bigint; blinding: bigint }>;
  expiresAt: number;
  state: 'prepared' | 'submitting' | 'confirmed' | 'failed';
  proveMs: number;
}

export interface FlowResult {
  txHash: string;
  amount: bigint;
  proveMs: number;
}

export interface PoolServiceDeps {
  store: EncryptedStore;
  masterKey: Uint8Array;
  agents: AgentRegistry;
  notes: NoteBook;
  indexer: PoolIndexer;
  ledger: LedgerClient;
  prover: PoolTransactionProver;
  deployment: Deployment;
  metrics: ProxyMetrics;
  logger: Logger;
  prepareTtlSeconds: number;
  txTimeoutSeconds: number;
  stats: PoolStatsService;
}

export class PoolService {
  readonly #d: PoolServiceDeps;
  readonly #prepareLock = new KeyedMutex();
  readonly #spendLock = new KeyedMutex();
  readonly #membershipLock = new KeyedMutex();
  readonly #keyring: AgentKeyring;
  readonly #crediting: NoteCrediting;

  constructor(deps: PoolServiceDeps) {
    this.#d = deps;
    this.#keyring = new AgentKeyring(deps.masterKey);
    this.#crediting = new NoteCrediting({ ...deps, keyring: this.#keyring });
  }

  // ---- wallet deposit ----

  async prepareDeposit(
    wallet: string,
    agentId: string,
    amount: bigint,
  ): Promise<{ prepareId: string; transactionXDR: string; expiresAt: string }> {
    // Checked before proving, so an unfunded wallet learns it at once instead of after a proof.
    const held = await this.#usdcBalance(wallet);
    if (held < amount) {
      throw new ProblemError(
        'ledger_rejected',
        `the wallet holds ${formatAmount(held)} USDC, less than the ${formatAmount(amount)} USDC to deposit`,
      );
    }
    const agent = await this.#d.agents.ensure(agentId, wallet);
    await this.#ensureMembership(agent);
    const crypto = this.#keyring.crypto(agentId);
    const proved = await this.#d.prover.prove(crypto, [], amount, amount, wallet, this.#registration(agent));
    const tx = await this.#d.ledger.prepareInvocation(wallet, this.#d.deployment.contracts.pool, 'transact', [
      proved.args.proof,
      proved.args.extData,
      new Address(wallet).toScVal(),
    ]);
    const prepareId = randomUUID();
    const expiresAt = Date.now() + this.#d.prepareTtlSeconds * 1000;
    const record: PreparedDepositRecord = {
      prepareId,
      wallet,
      agentId,
      amount,
      txHash: Buffer.from(tx.hash()).toString('hex'),
      outputs: proved.outputs,
      expiresAt,
      state: 'prepared',
      proveMs: proved.proveMs,
    };
    await this.#d.store.put(this.#preparedKey(prepareId), record);
    return { prepareId, transactionXDR: tx.toXDR(), expiresAt: new Date(expiresAt).toISOString() };
  }

  async submitDeposit(wallet: string, prepareId: string, signedXdr: string): Promise<FlowResult> {
    return this.#prepareLock.run(prepareId, async () => {
      const key = this.#preparedKey(prepareId);
      const record = await this.#d.store.get<PreparedDepositRecord>(key);
      if (record === undefined) throw new ProblemError('not_found', 'unknown prepareId');
      if (record.wallet !== wallet)
        throw new ProblemError('forbidden', 'this prepareId belongs to another wallet');
      if (record.state !== 'prepared')
        throw new ProblemError('invalid_request', `prepareId was already used (${record.state})`);
      if (Date.now() > record.expiresAt)
        throw new ProblemError('prepare_expired', 'the prepared deposit expired; prepare a new one');
      const tx = this.#parseSigned(signedXdr);
      if (Buffer.from(tx.hash()).toString('hex') !== record.txHash) {
        throw new ProblemError(
          'prepare_mismatch',
          'the signed transaction differs from the prepared one (operations, amounts, fees or bounds changed)',
        );
      }
      const signer = Keypair.fromPublicKey(wallet);
      const signatures = tx.signatures;
      if (signatures.length !== 1 || !signer.verify(tx.hash(), signatures[0].signature.toBytes())) {
        throw new ProblemError(
          'prepare_mismatch',
          'the transaction must carry exactly one valid signature of the depositing wallet',
        );
      }
      // Register the outputs before sending: whoever sees the confirmation (this request or the indexer
      // after a restart) credits them once.
      await this.#d.store.batch([
        { type: 'put', key, value: { ...record, state: 'submitting' } },
        ...this.#crediting.pendingOps(record.agentId, record.outputs),
      ]);
      this.#d.metrics.transactionsInFlight.inc();
      try {
        const confirmed = await this.#d.ledger.submitAndConfirm(tx);
        await this.#awaitCredit(record.agentId, confirmed.ledger, record.outputs);
        await this.#d.store.put(key, { ...record, state: 'confirmed' });
        this.#d.metrics.ledgerOperations.inc({ kind: 'deposit', outcome: 'confirmed' });
        await this.#d.stats.recordTransaction();
        return { txHash: confirmed.hash, amount: record.amount, proveMs: record.proveMs };
      } catch (error) {
        if (error instanceof ProblemError && error.code === 'ledger_rejected') {
          await this.#d.store.batch([
            { type: 'put', key, value: { ...record, state: 'failed' } },
            ...this.#crediting.dropPendingOps(record.outputs),
          ]);
          this.#d.metrics.ledgerOperations.inc({ kind: 'deposit', outcome: 'rejected' });
        }
        throw error;
      } finally {
        this.#d.metrics.transactionsInFlight.dec();
      }
    });
  }

  // ---- operator deposit ----

  async operatorDeposit(agentId: string, owner: string, amount: bigint): Promise<FlowResult> {
    const operator = this.#d.deployment.operator;
    const held = await this.#usdcBalance(operator.publicKey());
    if (held < amount) {
      throw new ProblemError(
        'service_unavailable',
        `the operator account holds ${formatAmount(held)} USDC and cannot fund ${formatAmount(amount)} USDC; top it up`,
      );
    }
    const agent = await this.#d.agents.ensure(agentId, owner);
    await this.#ensureMembership(agent);
    const { confirmed, proveMs } = await this.#proveAndSend(agentId, () =>
      this.#d.prover.prove(
        this.#keyring.crypto(agentId),
        [],
        amount,
        amount,
        operator.publicKey(),
        this.#registration(agent),
      ),
    );
    this.#d.metrics.ledgerOperations.inc({ kind: 'operator_deposit', outcome: 'confirmed' });
    await this.#d.stats.recordTransaction();
    return { txHash: confirmed.hash, amount, proveMs };
  }

  // ---- withdrawal ----

  async withdraw(agentId: string, owner: string, amount: bigint, destination: string): Promise<FlowResult> {
    const agent = await this.#d.agents.authorize(agentId, owner);
    if (agent === undefined)
      throw new ProblemError(
        'insufficient_balance',
        `available balance 0.0000000 USDC is less than ${formatAmount(amount)} USDC`,
      );
    const opId = randomUUID();
    await this.#d.notes.reserve(agentId, opId, amount);
    try {
      // One spend at a time per agent: note selection, change and consolidation depend on the last result.
      return await this.#spendLock.run(agentId, async () => {
        const crypto = this.#keyring.crypto(agentId);
        let consolidations = 0;
        let inputs = await this.#selectNotes(agentId, amount);
        while (inputs === undefined) {
          await this.#consolidate(agent, crypto);
          consolidations += 1;
          inputs = await this.#selectNotes(agentId, amount);
        }
        const total = inputs.reduce((s, n) => s + n.amount, 0n);
        await this.#d.notes.lock(
          agentId,
          opId,
          inputs.map((n) => n.commitment),
        );
        const notes = inputs;
        const { confirmed, proveMs } = await this.#proveAndSend(agentId, () =>
          this.#d.prover.prove(
            crypto,
            notes,
            total - amount,
            -amount,
            destination,
            this.#registration(agent),
          ),
        );
        this.#d.metrics.ledgerOperations.inc({ kind: 'withdraw', outcome: 'confirmed' });
        await this.#d.stats.recordTransaction();
        this.#d.logger.log('info', 'withdrawal confirmed', { txHash: confirmed.hash, consolidations });
        return { txHash: confirmed.hash, amount, proveMs };
      });
    } catch (error) {
      await this.#settleFailure(agentId, opId, error);
      throw error;
    }
  }

  /** Up to two unspent notes covering `amount` (smallest sufficient), or undefined when consolidation is needed. */
  async #selectNotes(agentId: string, amount: bigint): Promise<NoteRecord[] | undefined> {
    const notes = (await this.#d.notes.unspentNotes(agentId)).sort((a, b) =>
      a.amount < b.amount ? -1 : a.amount > b.amount ? 1 : 0,
    );
    const single = notes.find((n) => n.amount >= amount);
    if (single) return [single];
    for (let i = 0; i < notes.length; i++) {
      for (let j = i + 1; j < notes.length; j++)
        if (notes[i].amount + notes[j].amount >= amount) return [notes[i], notes[j]];
    }
    if (notes.length <= 2)
      throw new ProblemError('insufficient_balance', 'the agent notes do not cover the amount');
    return undefined;
  }

  /** Merges the agent's two largest notes into one (ext amount 0), so fewer notes cover larger amounts. */
  async #consolidate(agent: AgentRecord, crypto: AgentCrypto): Promise<void> {
    const agentId = agent.agentId;
    const notes = (await this.#d.notes.unspentNotes(agentId))
      .sort((a, b) => (a.amount > b.amount ? -1 : 1))
      .slice(0, 2);
    const opId = `consolidate:${randomUUID()}`;
    await this.#d.notes.lock(
      agentId,
      opId,
      notes.map((n) => n.commitment),
    );
    try {
      await this.#proveAndSend(agentId, () =>
        this.#d.prover.prove(
          crypto,
          notes,
          notes[0].amount + notes[1].amount,
          0n,
          this.#d.deployment.operator.publicKey(),
          this.#registration(agent),
        ),
      );
      this.#d.metrics.ledgerOperations.inc({ kind: 'consolidate', outcome: 'confirmed' });
      await this.#d.stats.recordTransaction();
    } catch (error) {
      await this.#settleFailure(agentId, opId, error);
      throw error;
    }
  }

  /**
   * Proves and relays as the operator. The ASP contracts keep only their current root, so another agent's
   * registration between proving and applying invalidates the proof; then the indexer catches up and the
   * statement is proved again over the new roots (a bounded number of times).
   */
  async #proveAndSend(agentId: string, prove: () => Promise<ProvedTransaction>) {
    for (let attempt = 1; ; attempt++) {
      const proved = await prove();
      try {
        return { confirmed: await this.#sendAsOperator(agentId, proved), proveMs: proved.proveMs };
      } catch (error) {
        const stale =
          error instanceof ProblemError && error.code === 'ledger_rejected' && /#(7|8)\b/.test(error.message);
        if (!stale || attempt >= 3) throw error;
        this.#d.logger.log('info', 'proof went stale (ASP or pool root moved); proving again', { attempt });
        await this.#d.indexer.sync();
      }
    }
  }

  async #sendAsOperator(agentId: string, proved: ProvedTransaction) {
    const operator = this.#d.deployment.operator;
    await this.#d.store.batch(this.#crediting.pendingOps(agentId, proved.outputs));
    this.#d.metrics.transactionsInFlight.inc();
    try {
      const confirmed = await this.#d.ledger.invokeAndConfirm(
        operator,
        this.#d.deployment.contracts.pool,
        'transact',
        [proved.args.proof, proved.args.extData, new Address(operator.publicKey()).toScVal()],
      );
      await this.#awaitCredit(agentId, confirmed.ledger, proved.outputs);
      return confirmed;
    } catch (error) {
      if (error instanceof ProblemError && error.code === 'ledger_rejected') {
        await this.#d.store.batch(this.#crediting.dropPendingOps(proved.outputs));
      }
      throw error;
    } finally {
      this.#d.metrics.transactionsInFlight.dec();
    }
  }

  /**
   * After a failed spend: a definite failure releases the reservation and the notes at once; an uncertain
   * one (sent, not decided) keeps them held and is reconciled by hash, so a late landing cannot overdraw.
   */
  async #settleFailure(agentId: string, opId: string, error: unknown): Promise<void> {
    if (error instanceof UncertainOutcome) {
      const record: UncertainSpend = {
        agentId,
        opId,
        txHash: error.txHash,
        giveUpAt: Date.now() + (this.#d.txTimeoutSeconds + 60) * 1000,
      };
      await this.#d.store.put(this.#d.store.key('uncertain', opId), record);
      return;
    }
    await this.#d.notes.release(agentId, opId);
  }

  /**
   * Resolves spends whose outcome was unknown: landed → the indexer already applied them; failed, or
   * past their time bounds and never seen → release what they held.
   */
  async reconcileUncertain(now = Date.now()): Promise<number> {
    let resolved = 0;
    for (const [key, record] of await this.#d.store.entries<UncertainSpend>('uncertain/')) {
      const { status } = await this.#d.ledger.status(record.txHash);
      if (status === 'SUCCESS') {
        await this.#d.indexer.sync();
      } else if (status === 'FAILED' || now > record.giveUpAt) {
        await this.#d.notes.release(record.agentId, record.opId);
      } else {
        continue;
      }
      await this.#d.store.del(key);
      resolved++;
    }
    return resolved;
  }

  /** Deletes prepared deposits a day past their expiry (a late submit then gets 404 instead of 410). */
  async sweepPrepared(now = Date.now()): Promise<number> {
    const old = (await this.#d.store.entries<PreparedDepositRecord>('prepared/')).filter(
      ([, r]) => r.state !== 'submitting' && r.expiresAt + 86_400_000 < now,
    );
    await this.#d.store.batch(old.map(([key]) => ({ type: 'del' as const, key })));
    return old.length;
  }

  // ---- helpers ----

  /** USDC held by `address` (a token `balance` read by simulation; a missing account holds 0). */
  async #usdcBalance(address: string): Promise<bigint> {
    const value = await this.#d.ledger.read(
      this.#d.deployment.operator.publicKey(),
      this.#d.deployment.contracts.token,
      'balance',
      [new Address(address).toScVal()],
    );
    return BigInt(scValToNative(value) as bigint);
  }

  #registration(agent: AgentRecord): Uint8Array {
    return this.#keyring.sealRegistration({ agentId: agent.agentId, owner: agent.owner });
  }

  async #ensureMembership(agent: AgentRecord): Promise<void> {
    if (agent.membershipLeafIndex !== undefined) return;
    await this.#membershipLock.run(agent.agentId, async () => {
      const current = (await this.#d.agents.get(agent.agentId)) ?? agent;
      if (current.membershipLeafIndex !== undefined) return;
      const leaf = this.#keyring.crypto(agent.agentId).membershipLeaf;
      let index = this.#aspIndex(leaf);
      if (index === undefined) {
        const confirmed = await this.#d.ledger.invokeAndConfirm(
          this.#d.deployment.aspAdmin,
          this.#d.deployment.contracts.aspMembership,
          'insert_leaf',
          [xdrU256(leaf)],
        );
        await this.#d.indexer.waitForLedger(confirmed.ledger);
        index = this.#aspIndex(leaf);
        if (index === undefined)
          throw new ProblemError('service_unavailable', 'allowlist insert not indexed yet; retry');
      }
      await this.#d.agents.update({ ...current, membershipLeafIndex: index });
    });
  }

  #aspIndex(leaf: bigint): number | undefined {
    const tree = this.#d.indexer.aspTree;
    for (let i = 0; i < tree.nextIndex; i++) if (tree.leaf(i) === leaf) return i;
    return undefined;
  }

  async #awaitCredit(agentId: string, ledger: number, outputs: Array<{ commitment: bigint }>): Promise<void> {
    await this.#d.indexer.waitForLedger(ledger);
    for (const o of outputs) {
      // The indexer credits the note; one more pass covers a poll that raced with this confirmation.
      if (!(await this.#d.notes.hasNote(agentId, o.commitment))) await this.#d.indexer.sync();
      if (!(await this.#d.notes.hasNote(agentId, o.commitment))) {
        throw new ProblemError(
          'service_unavailable',
          'the transaction is confirmed but not indexed yet; the balance will follow',
        );
      }
    }
  }

  #parseSigned(signedXdr: string): Transaction {
    let tx: Transaction | FeeBumpTransaction;
    try {
      tx = TransactionBuilder.fromXDR(signedXdr, this.#d.deployment.networkPassphrase);
    } catch {
      throw new ProblemError('invalid_request', 'signedTransactionXDR is not a transaction envelope');
    }
    if (tx instanceof FeeBumpTransaction)
      throw new ProblemError(
        'prepare_mismatch',
        'fee-bump envelopes are not accepted; sign the prepared transaction',
      );
    return tx;
  }

  #preparedKey(prepareId: string): string {
    return this.#d.store.key('prepared', prepareId);
  }
}

function xdrU256(value: bigint) {
  return nativeToScVal(value, { type: 'u256' });
}
