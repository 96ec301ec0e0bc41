// ffjavascript ships no type declarations; the prover uses its curve object untyped at a few call sites.
declare module 'ffjavascript';
