// `npm test`, after the TypeScript suite: the contracts' own unit tests (`cargo test` in contracts/, on the
// real Soroban host through soroban-sdk's test utilities), with the toolchain that builds them.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureToolchain } from './build-contracts.ts';

const contracts = join(fileURLToPath(new URL('..', import.meta.url)), 'contracts');
const tc = ensureToolchain();
const jobs = process.env.CARGO_BUILD_JOBS ?? '2';
console.log(`test-contracts: ${tc.cargo} test --locked -j ${jobs} (in contracts/)`);
const run = spawnSync(tc.cargo, ['test', '--locked', '-j', jobs], {
  cwd: contracts,
  stdio: 'inherit',
  env: { ...process.env, RUSTC: tc.rustc },
});
process.exit(run.status ?? 1);
