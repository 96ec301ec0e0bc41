// `npm test`, after the TypeScript suite: the Rust workspace's own tests (`cargo test` at the root: the
// contracts' unit tests on the real Soroban host through soroban-sdk's test utilities, and the host addon's),
// with the toolchain and profile `npm run build` compiled them with, so nothing is compiled again.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureToolchain } from './build-contracts.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const tc = ensureToolchain();
const jobs = process.env.CARGO_BUILD_JOBS ?? '2';
console.log(`test-rust: ${tc.cargo} test --locked -j ${jobs}`);
const run = spawnSync(tc.cargo, ['test', '--locked', '-j', jobs], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, RUSTC: tc.rustc },
});
process.exit(run.status ?? 1);
