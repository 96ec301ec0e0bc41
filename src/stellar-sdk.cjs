// The Stellar SDK as every module of the service imports it ('#stellar-sdk' in package.json "imports"): its
// CommonJS build. Node 20 runs tsx's module hooks on another thread, so each ESM module costs a round trip
// between threads: the SDK's ESM build (600-odd modules) took ~3.3 s of CPU to import under tsx, its CommonJS
// build ~1.4 s, and every test process, child proxy and CLI run imports it. Node reads the named exports of
// this re-export statically (so keep the file to this one statement: cjs-module-lexer); the browser bundle
// resolves '#stellar-sdk' to the package itself.
module.exports = require('@stellar/stellar-sdk');
