export * from './policy-circuit.ts';
export * from './r1cs.ts';
export * from './transaction.ts';
export * from './witness-calculator.ts';
export * from './witness-error.ts';
