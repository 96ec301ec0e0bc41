// Errors raised while executing contracts, shaped like Soroban host errors so that clients see the
// same `Error(Contract, #n)` / `Error(Auth, InvalidAction)` strings a real network produces.
import { xdr } from '@stellar/stellar-sdk';

export type ScErrorTypeName =
  | 'Contract'
  | 'WasmVm'
  | 'Context'
  | 'Storage'
  | 'Object'
  | 'Crypto'
  | 'Events'
  | 'Budget'
  | 'Value'
  | 'Auth';

export type ScErrorCodeName =
  | 'ArithDomain'
  | 'IndexBounds'
  | 'InvalidInput'
  | 'MissingValue'
  | 'ExistingValue'
  | 'ExceededLimit'
  | 'InvalidAction'
  | 'InternalError'
  | 'UnexpectedType'
  | 'UnexpectedSize';

/** A failed host or contract operation; aborts the whole transaction. */
export class HostError extends Error {
  readonly kind: ScErrorTypeName;
  /** contract error number for kind 'Contract', else a ScErrorCode name */
  readonly code: number | ScErrorCodeName;
  readonly detail: string;

  constructor(kind: ScErrorTypeName, code: number | ScErrorCodeName, detail = '') {
    super(
      `HostError: Error(${kind}, ${typeof code === 'number' ? `#${code}` : code})${detail ? `\n${detail}` : ''}`,
    );
    this.kind = kind;
    this.code = code;
    this.detail = detail;
  }

  toScError(): xdr.ScError {
    if (this.kind === 'Contract') return xdr.ScError.sceContract(this.code as number);
    const code = xdr.ScErrorCode[`scec${this.code}` as 'scecInvalidAction'];
    const factory = xdr.ScError[`sce${this.kind}` as 'sceAuth'] as (c: xdr.ScErrorCode) => xdr.ScError;
    return factory(code);
  }
}

/** A contract-defined error (`Error(Contract, #code)`). */
export function contractError(code: number, detail = ''): HostError {
  return new HostError('Contract', code, detail);
}

export const valueError = (detail: string) => new HostError('Value', 'UnexpectedType', detail);
export const authError = (detail: string) => new HostError('Auth', 'InvalidAction', detail);
