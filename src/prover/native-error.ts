// Errors of the native prover, by code. The addon rejects (and throws) Errors that carry a `code` and,
// when one part of an input is at fault, the `section` and `index` of that part (native/src/errors.hpp
// defines the same codes); nativeError turns them into one typed class, so callers decide on the code
// and never on message text.

/** What kind of failure (native/src/errors.hpp, ErrorCode). */
export const NATIVE_ERROR_CODES = [
  'zkey_invalid', // malformed, or fails validation (sizes, ranges, points on the curve, subgroup)
  'wtns_invalid', // malformed, or a value not below the field modulus
  'r1cs_invalid',
  'file_unreadable', // a key file that cannot be opened, examined or mapped
  'witness_mismatch', // a well-formed witness that does not belong to the key
  'witness_unsatisfied', // the proof from this witness failed the self-check
  'key_changed', // the key file was rewritten in place under a loaded key
  'setup_failed',
  'bad_argument',
  'out_of_memory',
  'internal', // a fault of the prover itself
  'test_fault', // raised on purpose by the addon's test hook (testOps.failInPool)
] as const;

export type NativeErrorCode = (typeof NATIVE_ERROR_CODES)[number];

export class NativeProverError extends Error {
  constructor(
    readonly code: NativeErrorCode,
    message: string,
    /** The part of the input at fault, e.g. "B2", "coefficients", "values", "header". */
    readonly section?: string,
    /** The element of that part, e.g. the point or witness value. */
    readonly index?: number,
  ) {
    super(message);
    this.name = 'NativeProverError';
  }
}

function isNativeErrorCode(code: unknown): code is NativeErrorCode {
  return typeof code === 'string' && (NATIVE_ERROR_CODES as readonly string[]).includes(code);
}

/** The addon's error as a NativeProverError; anything without a known code is an internal one. */
export function nativeError(error: unknown): NativeProverError {
  if (error instanceof NativeProverError) return error;
  const raw = (error ?? {}) as { code?: unknown; message?: unknown; section?: unknown; index?: unknown };
  const message = typeof raw.message === 'string' ? raw.message : String(error);
  return new NativeProverError(
    isNativeErrorCode(raw.code) ? raw.code : 'internal',
    message,
    typeof raw.section === 'string' ? raw.section : undefined,
    typeof raw.index === 'number' ? raw.index : undefined,
  );
}
