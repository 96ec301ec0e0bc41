// Typed contract errors for callers of the pool's contracts. A failed simulation, a refused send or a failed
// transaction carries diagnostic events; the Soroban host logs, in the frame of the contract that failed, an
// event with topics `["error", Error(Contract, #n)]`. `contractErrorOf` finds the first such event (the
// origin: later ones are the same error propagating through the callers) and names it with the contract's
// error enum — read from the XDR, never from message text.
import { type rpc, xdr, StrKey } from '#stellar-sdk';
import { type ContractInterface, errorName } from './contract-spec.ts';
import {
  ASP_MEMBERSHIP_INTERFACE,
  ASP_NON_MEMBERSHIP_INTERFACE,
  POOL_INTERFACE,
  VERIFIER_INTERFACE,
} from './pool-interface.ts';

/** The Stellar Asset Contract's error codes (soroban-env-host's built-in token contract). */
export const StellarAssetError = {
  InternalError: 1,
  OperationNotSupportedError: 2,
  AlreadyInitializedError: 3,
  UnauthorizedError: 4,
  AuthenticationError: 5,
  AccountMissingError: 6,
  AccountIsNotClassic: 7,
  NegativeAmountError: 8,
  AllowanceError: 9,
  BalanceError: 10,
  BalanceDeauthorizedError: 11,
  OverflowError: 12,
  TrustlineMissingError: 13,
} as const;

export type PoolContractName = 'pool' | 'verifier' | 'asp_membership' | 'asp_non_membership' | 'token';

/** Contract ids of a deployment, by role (the shape of the sandbox's and the proxy's deployment info). */
export type ContractIds = Partial<Record<PoolContractName, string>>;

const INTERFACES: Record<PoolContractName, ContractInterface> = {
  pool: POOL_INTERFACE,
  verifier: VERIFIER_INTERFACE,
  asp_membership: ASP_MEMBERSHIP_INTERFACE,
  asp_non_membership: ASP_NON_MEMBERSHIP_INTERFACE,
  token: { name: 'token', functions: [], structs: [], errors: [{ name: 'Error', cases: StellarAssetError }] },
};

/** `Error(Contract, #code)` raised by one of the deployment's contracts. */
export class ContractError extends Error {
  /** which contract of the deployment failed ('unknown' if its id is not one of them) */
  readonly contract: PoolContractName | 'unknown';
  /** the C… id of the contract that raised it, when the events name it */
  readonly contractId: string | undefined;
  readonly code: number;
  /** the error enum case (e.g. 'UnknownRoot'), or `Error#n` for a code the enum does not declare */
  override readonly name: string;

  constructor(contract: PoolContractName | 'unknown', contractId: string | undefined, code: number) {
    const iface = contract === 'unknown' ? undefined : INTERFACES[contract];
    const name = (iface && errorName(iface, code)) ?? `Error#${code}`;
    super(`${contract} contract failed with Error(Contract, #${code}) ${name}`);
    this.contract = contract;
    this.contractId = contractId;
    this.code = code;
    this.name = name;
  }

  /** true if this is `contract`'s error `name` (e.g. `is('pool', 'UnknownRoot')`) */
  is(contract: PoolContractName, name: string): boolean {
    return this.contract === contract && this.name === name;
  }
}

function asEvents(list: unknown): xdr.DiagnosticEvent[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((e) => {
    if (e instanceof xdr.DiagnosticEvent) return [e];
    if (typeof e === 'string') {
      try {
        return [xdr.DiagnosticEvent.fromXdr(e, 'base64')];
      } catch {
        return [];
      }
    }
    return [];
  });
}

function metaEvents(meta: unknown): xdr.DiagnosticEvent[] {
  let m = meta;
  if (typeof m === 'string') {
    try {
      m = xdr.TransactionMeta.fromXdr(m, 'base64');
    } catch {
      return [];
    }
  }
  if (!xdr.TransactionMeta.is(m)) return [];
  if (m.type === 'v3') return m.v3.sorobanMeta?.diagnosticEvents ?? [];
  if (m.type === 'v4') return m.v4.diagnosticEvents;
  return [];
}

/** The diagnostic events of a simulation, sendTransaction or getTransaction response (or a list of them). */
export function diagnosticEventsOf(response: unknown): xdr.DiagnosticEvent[] {
  if (Array.isArray(response)) return asEvents(response);
  if (typeof response !== 'object' || response === null) return [];
  const r = response as Record<string, unknown>;
  const nested = r.events as Record<string, unknown> | undefined;
  for (const list of [
    r.diagnosticEvents,
    r.diagnosticEventsXdr,
    Array.isArray(r.events) ? r.events : nested?.diagnosticEventsXdr,
  ]) {
    const events = asEvents(list);
    if (events.length > 0) return events;
  }
  return metaEvents(r.resultMetaXdr);
}

function errorOf(ev: xdr.DiagnosticEvent): { contractId: string | undefined; code: number } | undefined {
  const event = ev.event;
  const [first, second] = (event.body.value as xdr.ContractEventV0).topics;
  if (first?.type !== 'scvSymbol' || String(first.value) !== 'error') return undefined;
  if (second?.type !== 'scvError') return undefined;
  const err = second.value as xdr.ScError;
  if (err.type !== 'sceContract') return undefined;
  const raw: unknown = event.contractId;
  const bytes = raw instanceof Uint8Array ? raw : (raw as { value?: unknown } | null)?.value;
  return {
    contractId: bytes instanceof Uint8Array ? StrKey.encodeContract(Buffer.from(bytes)) : undefined,
    code: err.value as number,
  };
}

/**
 * The contract error a failed simulation / send / transaction carries, named with the deployment's
 * contracts; undefined when it failed for another reason (auth, budget, a malformed call).
 */
export function contractErrorOf(
  response: rpc.Api.SimulateTransactionResponse | rpc.Api.GetTransactionResponse | unknown,
  contracts: ContractIds,
): ContractError | undefined {
  for (const ev of diagnosticEventsOf(response)) {
    const found = errorOf(ev);
    if (!found) continue;
    const role = (Object.keys(contracts) as PoolContractName[]).find(
      (k) => found.contractId !== undefined && contracts[k] === found.contractId,
    );
    return new ContractError(role ?? 'unknown', found.contractId, found.code);
  }
  return undefined;
}

/** A host error (not a contract's own): its type and code as the XDR names them, e.g. `Storage` / `ExceededLimit`. */
export interface HostErrorInfo {
  type: string;
  code: string;
}

/**
 * The host error a failed simulation / send / transaction carries (e.g. `Storage, ExceededLimit`: a write
 * outside the declared footprint), read from its diagnostic events; undefined when a contract's own error
 * (see `contractErrorOf`) or nothing explains the failure.
 */
export function hostErrorOf(response: unknown): HostErrorInfo | undefined {
  for (const ev of diagnosticEventsOf(response)) {
    const [first, second] = (ev.event.body.value as xdr.ContractEventV0).topics;
    if (first?.type !== 'scvSymbol' || !['error', 'host_fn_failed'].includes(String(first.value))) continue;
    if (second?.type !== 'scvError') continue;
    const err = second.value as xdr.ScError;
    if (err.type === 'sceContract') return undefined;
    const code = (err.value as { name?: string } | undefined)?.name ?? String(err.value);
    return { type: err.type.replace(/^sce/, ''), code: code.replace(/^scec/, '') };
  }
  return undefined;
}
