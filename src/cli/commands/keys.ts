import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_CIRCUITS_DIR, circuitArtifacts } from '../../circuit/policy-circuit.ts';
import { readR1csHeader } from '../../circuit/r1cs.ts';
import { DEV_KEY_NAME, devSetup, exportVerificationKey } from '../../prover/index.ts';
import { addon } from '../../prover/native-addon.ts';
import { zkeyOrigin } from '../../prover/setup-info.ts';

// `pool-proxy keys import`: installs a ceremony zkey for a circuit after checking it parses, its points
// are on the curve, its G2 points are in the prime-order subgroup and its shape matches the circuit's
// r1cs; writes its verification_key.json.
// `pool-proxy keys dev-setup`: makes a DEVELOPMENT key from fresh local toxic waste.
export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('install or create Groth16 proving keys');

  keys
    .command('import <zkey>')
    .description('install a ceremony zkey for a circuit and write its verification_key.json')
    .option('--circuit <id>', 'circuit id', 'policy_tx_2_2')
    .option('--circuits-dir <dir>', 'circuit build directory', DEFAULT_CIRCUITS_DIR)
    .action(async (zkeyPath: string, opts: { circuit: string; circuitsDir: string }) => {
      try {
        const art = circuitArtifacts(opts.circuit, path.resolve(opts.circuitsDir));
        const bytes = await readFile(zkeyPath).catch((err: Error) => {
          throw new Error(`cannot read ${zkeyPath}: ${err.message}`);
        });
        const key = await addon.loadKey(bytes);
        // Loading checks that points are on the curve; a key from outside also needs its G2 points in
        // the prime-order subgroup (G1's cofactor is 1, so on the curve is enough there).
        await addon.checkKey(key.handle);
        const r1cs = await readR1csHeader(art.r1cs).catch((err: Error) => {
          throw new Error(
            `cannot read the circuit's r1cs ${art.r1cs} (run \`npm run build\`?): ${err.message}`,
          );
        });
        const nPublic = r1cs.nPublicOutputs + r1cs.nPublicInputs;
        const domainSize = 2 ** (Math.floor(Math.log2(r1cs.nConstraints + nPublic)) + 1);
        if (key.nVars !== r1cs.nWires || key.nPublic !== nPublic || key.domainSize !== domainSize) {
          throw new Error(
            `${zkeyPath} does not belong to circuit ${opts.circuit}: key has ${key.nVars} wires, ${key.nPublic} public, ` +
              `domain ${key.domainSize}; the r1cs has ${r1cs.nWires} wires, ${nPublic} public, domain ${domainSize}`,
          );
        }
        const vkey = await exportVerificationKey(bytes);
        const origin = zkeyOrigin(bytes);
        await mkdir(art.dir, { recursive: true });
        const tmp = `${art.zkey}.importing-${process.pid}`;
        await writeFile(tmp, bytes);
        await rename(tmp, art.zkey);
        // loading the installed file validates it once more and writes its prepared form beside it
        // (`<zkey>.prep`), so the daemon's first start maps it in milliseconds
        await addon.loadKey(art.zkey);
        await writeFile(art.vkey, `${JSON.stringify(vkey, null, 1)}\n`);
        console.log(`installed ${art.zkey}`);
        console.log(`wrote ${art.vkey}`);
        console.log(
          `contributions: ${origin.contributions.length ? origin.contributions.map((c) => JSON.stringify(c)).join(', ') : 'none'}`,
        );
        if (origin.isDevelopmentKey)
          console.log('WARNING: this is a DEVELOPMENT key (local toxic waste), not a ceremony key');
        if (origin.contributions.length === 0)
          console.log('WARNING: this key has no phase-2 contribution; it is not safe for production');
      } catch (err) {
        console.error(`keys import failed: ${(err as Error).message}`);
        process.exitCode = 1;
      }
    });

  keys
    .command('dev-setup <r1cs> <zkeyOut> <vkeyOut>')
    .description(
      'create a DEVELOPMENT zkey and verification key from fresh local toxic waste (never for production)',
    )
    .action(async (r1csPath: string, zkeyOut: string, vkeyOut: string) => {
      try {
        const started = Date.now();
        await devSetup(r1csPath, zkeyOut, vkeyOut);
        console.log(
          `DEVELOPMENT KEY written to ${zkeyOut} (verification key ${vkeyOut}) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
        console.log(
          `It is marked "${DEV_KEY_NAME}". Its toxic waste was generated on this machine: anyone who`,
        );
        console.log(
          'kept it could forge proofs. Use it for development and tests only; import a ceremony key for production.',
        );
      } catch (err) {
        console.error(`keys dev-setup failed: ${(err as Error).message}`);
        process.exitCode = 1;
      }
    });
}
