// Chooses the proving engine by name.
import type { EngineName, ProvingEngine } from './engine.ts';
import { NativeEngine } from './native-engine.ts';
import { SnarkjsEngine } from './snarkjs-engine.ts';

export async function createEngine(name: EngineName): Promise<ProvingEngine> {
  if (name === 'native') return NativeEngine.create();
  if (name === 'snarkjs') return new SnarkjsEngine();
  throw new Error(`unknown engine "${name as string}" (expected native or snarkjs)`);
}

export { type EngineName, type Groth16Proof, type ProvingEngine } from './engine.ts';
