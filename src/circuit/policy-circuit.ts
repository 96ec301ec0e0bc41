// The shape of the pool circuit and where `npm run build` puts its artifacts.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const POLICY_CIRCUIT = {
  id: 'policy_tx_2_2',
  nIns: 2,
  nOuts: 2,
  levels: 20,
  aspLevels: 20,
  smtLevels: 10,
} as const;

export const DEFAULT_CIRCUITS_DIR = fileURLToPath(new URL('../../build/circuits', import.meta.url));

export interface CircuitArtifacts {
  dir: string;
  r1cs: string;
  wasm: string;
  sym: string;
  zkey: string;
  vkey: string;
}

export function circuitArtifacts(id: string, circuitsDir: string = DEFAULT_CIRCUITS_DIR): CircuitArtifacts {
  if (!/^[A-Za-z0-9_]+$/.test(id)) throw new TypeError(`invalid circuit id: ${id}`);
  const dir = join(circuitsDir, id);
  return {
    dir,
    r1cs: join(dir, `${id}.r1cs`),
    wasm: join(dir, `${id}_js`, `${id}.wasm`),
    sym: join(dir, `${id}.sym`),
    zkey: join(dir, `${id}.zkey`),
    vkey: join(dir, 'verification_key.json'),
  };
}
