// What anyone watching the ledger sees, read only from its public Soroban RPC: every transaction in a ledger
// range (who submitted it, which contract functions it called) and the USDC token's transfers, with the pool
// contract's commitment and nullifier events. No proxy data is used here.
import {
  FeeBumpTransaction,
  rpc,
  scValToNative,
  type Transaction,
  TransactionBuilder,
  xdr,
} from '#stellar-sdk';

export interface ObservedTransaction {
  ledger: number;
  txHash: string;
  /** The account that signed and paid for the transaction. */
  source: string;
  /** Contract functions it invoked (e.g. transact, transfer, mint). */
  calls: string[];
  successful: boolean;
}

export interface ObservedTransfer {
  ledger: number;
  txHash: string;
  from: string;
  to: string;
  /** Stroops. */
  amount: bigint;
}

export interface ObserverView {
  rpcUrl: string;
  startLedger: number;
  endLedger: number;
  transactions: ObservedTransaction[];
  /** USDC token `transfer` events, in ledger order. */
  transfers: ObservedTransfer[];
  /** USDC token `mint` events (the sandbox friendbot funding accounts). */
  mints: { ledger: number; txHash: string; to: string; amount: bigint }[];
  commitments: number;
  nullifiers: number;
  /** Hashes of the transactions whose envelope, result or events contain `needle` (text as UTF-8). */
  transactionsContaining(needle: string | Uint8Array): string[];
}

const PAGE = 200;

function functionNames(tx: Transaction): string[] {
  const names: string[] = [];
  for (const op of tx.operations) {
    if (op.type !== 'invokeHostFunction') continue;
    const fn = (op as { func: xdr.HostFunction }).func;
    if (fn.type === 'hostFunctionTypeInvokeContract')
      names.push(String((fn.value as xdr.InvokeContractArgs).functionName));
  }
  return names;
}

async function readTransactions(
  server: rpc.Server,
  passphrase: string,
  startLedger: number,
  endLedger: number,
): Promise<{ list: ObservedTransaction[]; raw: Map<string, Buffer> }> {
  const list: ObservedTransaction[] = [];
  const raw = new Map<string, Buffer>();
  let page = await server.getTransactions({ startLedger, pagination: { limit: PAGE } });
  for (;;) {
    for (const t of page.transactions) {
      if (t.ledger > endLedger) return { list, raw };
      const parsed = TransactionBuilder.fromXDR(t.envelopeXdr.toXDR('base64'), passphrase);
      const inner = parsed instanceof FeeBumpTransaction ? parsed.innerTransaction : parsed;
      list.push({
        ledger: t.ledger,
        txHash: t.txHash,
        source: parsed instanceof FeeBumpTransaction ? parsed.feeSource : parsed.source,
        calls: functionNames(inner),
        successful: t.status === rpc.Api.GetTransactionStatus.SUCCESS,
      });
      raw.set(
        t.txHash,
        Buffer.concat(
          [t.envelopeXdr.toXDR(), t.resultXdr.toXDR(), t.resultMetaXdr.toXDR()].map((b) => Buffer.from(b)),
        ),
      );
    }
    if (page.transactions.length < PAGE) return { list, raw };
    page = await server.getTransactions({ pagination: { cursor: page.cursor, limit: PAGE } });
  }
}

async function readEvents(
  server: rpc.Server,
  contractIds: string[],
  startLedger: number,
  endLedger: number,
): Promise<rpc.Api.EventResponse[]> {
  const events: rpc.Api.EventResponse[] = [];
  const filters: rpc.Api.EventFilter[] = [{ type: 'contract', contractIds }];
  let page = await server.getEvents({ startLedger, endLedger: endLedger + 1, filters, limit: PAGE });
  for (;;) {
    events.push(...page.events.filter((e) => e.ledger <= endLedger));
    if (page.events.length < PAGE) return events;
    page = await server.getEvents({ cursor: page.cursor, filters, limit: PAGE });
  }
}

export async function observe(
  rpcUrl: string,
  passphrase: string,
  contracts: { token: string; pool: string },
  startLedger: number,
  endLedger: number,
): Promise<ObserverView> {
  const server = new rpc.Server(rpcUrl, { allowHttp: rpcUrl.startsWith('http://') });
  const { list, raw } = await readTransactions(server, passphrase, startLedger, endLedger);
  const events = await readEvents(server, [contracts.token, contracts.pool], startLedger, endLedger);
  const transfers: ObservedTransfer[] = [];
  const mints: ObserverView['mints'] = [];
  let commitments = 0;
  let nullifiers = 0;
  const eventBytes = new Map<string, Buffer[]>();
  for (const e of events) {
    const topic = e.topic.map((t) => scValToNative(t));
    const kind = String(topic[0]);
    const parts = eventBytes.get(e.txHash) ?? [];
    parts.push(...[...e.topic, e.value].map((v) => Buffer.from(v.toXDR())));
    eventBytes.set(e.txHash, parts);
    const contractId = e.contractId?.contractId();
    if (contractId === contracts.token && kind === 'transfer') {
      transfers.push({
        ledger: e.ledger,
        txHash: e.txHash,
        from: String(topic[1]),
        to: String(topic[2]),
        amount: BigInt(scValToNative(e.value)),
      });
    } else if (contractId === contracts.token && kind === 'mint') {
      mints.push({
        ledger: e.ledger,
        txHash: e.txHash,
        to: String(topic[1]),
        amount: BigInt(scValToNative(e.value)),
      });
    } else if (contractId === contracts.pool && kind === 'new_commitment_event') commitments += 1;
    else if (contractId === contracts.pool && kind === 'new_nullifier_event') nullifiers += 1;
  }
  return {
    rpcUrl,
    startLedger,
    endLedger,
    transactions: list,
    transfers,
    mints,
    commitments,
    nullifiers,
    transactionsContaining(search) {
      const needle = typeof search === 'string' ? Buffer.from(search, 'utf8') : Buffer.from(search);
      const hashes = new Set<string>();
      for (const [hash, bytes] of raw) if (bytes.includes(needle)) hashes.add(hash);
      for (const [hash, parts] of eventBytes) if (parts.some((b) => b.includes(needle))) hashes.add(hash);
      return [...hashes];
    },
  };
}
