// snarkjs ships no type declarations. A shorthand declaration (everything `any`) keeps every caller in the
// project compiling; the daemon narrows the results it uses at the call sites.
declare module 'snarkjs';
