// The one error for a bad witness, wherever it is found: inputs the circuit does not declare
// (`input_rejected`), a circuit assert that fails while the witness is computed (`constraint_failed`, with
// the circom template and line), or a witness whose proof does not verify (`witness_unsatisfied`, found by
// the native prover's self-check or by verifying after a proof). Callers decide on `code`.

export const WITNESS_ERROR_CODES = ['input_rejected', 'constraint_failed', 'witness_unsatisfied'] as const;

export type WitnessErrorCode = (typeof WITNESS_ERROR_CODES)[number];

export class WitnessError extends Error {
  constructor(
    readonly code: WitnessErrorCode,
    message: string,
    /** The circom template of a failed constraint. */
    readonly template?: string,
    /** The line of that template. */
    readonly line?: number,
  ) {
    super(message);
    this.name = 'WitnessError';
  }
}

/** A failing `===` or `assert` in the circuit, from the witness code's error text (template and line). */
export function constraintFailed(detail: string): WitnessError {
  const where = /Error in template (\S+) line: (\d+)/.exec(detail);
  return where
    ? new WitnessError(
        'constraint_failed',
        `constraint failed in template ${where[1]} line ${where[2]}`,
        where[1],
        Number(where[2]),
      )
    : new WitnessError('constraint_failed', `witness generation failed: ${detail.trim()}`);
}

/** The witness does not satisfy the circuit: the proof computed from it failed verification. */
export function witnessUnsatisfied(): WitnessError {
  return new WitnessError(
    'witness_unsatisfied',
    'witness does not satisfy the circuit: its proof failed verification and was discarded',
  );
}
