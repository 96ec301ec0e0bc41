// Builds the pool's Soroban contracts (contracts/, Rust) into build/contracts/<name>.wasm:
//  1. finds a Rust toolchain that can build wasm32v1-none (rustup's with the target installed, or Debian's
//     rustc-web with rust-web-src and lld, which builds core/alloc itself); as root on Debian it installs the
//     latter when none is found, otherwise it stops with the one command to run;
//  2. rebuilds only when the sources or the toolchain changed (a hash in build/contracts/.source-hash);
//  3. shakes each module's contract spec as `stellar contract build` does: soroban-sdk embeds a marker
//     `SpEcV1` ‖ SHA-256(entry XDR)[0..8] in the data section for every type and event the code uses, and
//     the spec (custom section `contractspecv0`) keeps its functions and only the entries whose marker is there;
//  4. checks each module against testnet's 131,072-byte limit and its spec against src/ledger/pool-interface.ts.
// Run alone: npx tsx scripts/build-contracts.ts [--force]
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contract } from '#stellar-sdk';
import type { ContractInterface, SpecType } from '../src/ledger/contract-spec.ts';
import {
  ASP_MEMBERSHIP_INTERFACE,
  ASP_NON_MEMBERSHIP_INTERFACE,
  POOL_INTERFACE,
  VERIFIER_INTERFACE,
} from '../src/ledger/pool-interface.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CONTRACTS_DIR = join(ROOT, 'contracts');
export const CONTRACTS_OUT_DIR = join(ROOT, 'build', 'contracts');
const STAMP = join(CONTRACTS_OUT_DIR, '.source-hash');
const TARGET = 'wasm32v1-none';
/** Testnet's (and mainnet's) maximum contract code size. */
export const MAX_WASM_BYTES = 131_072;

/** The four modules: output name, cargo package, and the interface the proxy relies on. */
export const CONTRACTS = [
  { name: 'verifier', pkg: 'verifier', iface: VERIFIER_INTERFACE },
  { name: 'pool', pkg: 'pool', iface: POOL_INTERFACE },
  { name: 'asp_membership', pkg: 'asp-membership', iface: ASP_MEMBERSHIP_INTERFACE },
  { name: 'asp_non_membership', pkg: 'asp-non-membership', iface: ASP_NON_MEMBERSHIP_INTERFACE },
] as const;

const DEBIAN_PACKAGES = ['rustc-web', 'cargo-web', 'rust-web-src', 'lld-22'];
const APT = 'apt-get';

// ---- toolchain ----

export interface Toolchain {
  cargo: string;
  rustc: string;
  /** extra cargo arguments (Debian's std is not prebuilt for wasm32v1-none: -Zbuild-std) */
  args: string[];
  env: Record<string, string>;
  /** `rustc -vV` and `cargo -V`: part of the source hash */
  version: string;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env });
  return r.status === 0 ? r.stdout : undefined;
}

function findWasmLd(): string | undefined {
  const llvm = existsSync('/usr/lib')
    ? readdirSync('/usr/lib')
        .filter((d) => /^llvm-\d+$/.test(d))
        .sort((a, b) => Number(b.slice(5)) - Number(a.slice(5)))
        .map((d) => join('/usr/lib', d, 'bin', 'wasm-ld'))
    : [];
  for (const p of llvm) if (existsSync(p)) return p;
  for (const name of ['wasm-ld', 'rust-lld']) if (run('which', [name])) return run('which', [name])?.trim();
  return undefined;
}

function findToolchain(): Toolchain | undefined {
  const candidates = [
    { cargo: 'cargo', rustc: 'rustc' },
    { cargo: '/usr/bin/cargo', rustc: '/usr/bin/rustc' },
  ];
  for (const c of candidates) {
    const rustcV = run(c.rustc, ['-vV']);
    const cargoV = run(c.cargo, ['-V'], { ...process.env, RUSTC: c.rustc });
    if (!rustcV || !cargoV) continue;
    if (!(run(c.rustc, ['--print', 'target-list']) ?? '').split('\n').includes(TARGET)) continue;
    const sysroot = run(c.rustc, ['--print', 'sysroot'])?.trim() ?? '';
    const base = { cargo: c.cargo, rustc: c.rustc, version: `${rustcV}${cargoV}` };
    const env = { RUSTC: c.rustc, SOROBAN_SDK_BUILD_SYSTEM_SUPPORTS_SPEC_SHAKING_V2: '1' };
    if (existsSync(join(sysroot, 'lib', 'rustlib', TARGET, 'lib'))) return { ...base, args: [], env };
    const librarySrc = join(sysroot, 'lib', 'rustlib', 'src', 'rust', 'library', 'core');
    const linker = findWasmLd();
    if (existsSync(librarySrc) && linker) {
      return {
        ...base,
        args: ['-Zbuild-std=core,alloc'],
        env: { ...env, RUSTC_BOOTSTRAP: '1', CARGO_TARGET_WASM32V1_NONE_LINKER: linker },
      };
    }
  }
  return undefined;
}

/** The toolchain that builds the contracts (installed on Debian as root when missing). */
export function ensureToolchain(): Toolchain {
  const found = findToolchain();
  if (found) return found;
  const debian = existsSync('/etc/debian_version') && !!run('which', [APT]);
  if (debian && process.getuid?.() === 0) {
    console.log(`build-contracts: installing Debian's Rust toolchain (${DEBIAN_PACKAGES.join(' ')})…`);
    execFileSync(APT, ['update', '-qq'], { stdio: 'inherit' });
    execFileSync(APT, ['install', '-y', '-qq', ...DEBIAN_PACKAGES], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    const installed = findToolchain();
    if (installed) return installed;
  }
  const command = debian
    ? `sudo apt-get install -y ${DEBIAN_PACKAGES.join(' ')}`
    : `rustup target add ${TARGET}`;
  throw new Error(`build-contracts: no Rust toolchain that builds ${TARGET} was found; run \`${command}\``);
}

// ---- sources ----

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory())
      return e.name === 'target' || e.name.startsWith('.') ? [] : sourceFiles(join(dir, e.name));
    return e.name.endsWith('.rs') || e.name === 'Cargo.toml' || e.name === 'Cargo.lock'
      ? [join(dir, e.name)]
      : [];
  });
}

function sourceHash(tc: Toolchain): string {
  const h = createHash('sha256');
  h.update(tc.version)
    .update(tc.args.join(' '))
    .update(readFileSync(fileURLToPath(import.meta.url)));
  for (const f of [...sourceFiles(CONTRACTS_DIR).sort(), join(ROOT, 'Cargo.toml'), join(ROOT, 'Cargo.lock')])
    h.update(relative(ROOT, f)).update('\0').update(readFileSync(f));
  return h.digest('hex');
}

// ---- wasm sections ----

interface Section {
  id: number;
  /** custom sections only */
  name?: string;
  /** the section's payload (after a custom section's name) */
  payload: Uint8Array;
}

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}
  byte(): number {
    if (this.pos >= this.buf.length) throw new Error('wasm: unexpected end');
    return this.buf[this.pos++] as number;
  }
  u32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 35) throw new Error('wasm: LEB128 too long');
    }
  }
  /** a signed LEB128, skipped (constant expressions) */
  skipLeb(): void {
    while (this.byte() & 0x80);
  }
  bytes(n: number): Uint8Array {
    if (this.pos + n > this.buf.length) throw new Error('wasm: unexpected end');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

function leb128(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

const WASM_HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

export function parseSections(wasm: Uint8Array): Section[] {
  if (!WASM_HEADER.every((b, i) => wasm[i] === b)) throw new Error('not a wasm module (version 1)');
  const r = new Reader(wasm);
  r.pos = 8;
  const sections: Section[] = [];
  while (r.pos < wasm.length) {
    const id = r.byte();
    const body = new Reader(r.bytes(r.u32()));
    if (id === 0) {
      const name = Buffer.from(body.bytes(body.u32())).toString('utf8');
      sections.push({ id, name, payload: body.buf.subarray(body.pos) });
    } else {
      sections.push({ id, payload: body.buf });
    }
  }
  return sections;
}

export function encodeSections(sections: Section[]): Buffer {
  const parts: Buffer[] = [Buffer.from(WASM_HEADER)];
  for (const s of sections) {
    const body =
      s.id === 0
        ? Buffer.concat([
            Buffer.from(leb128(Buffer.byteLength(s.name ?? ''))),
            Buffer.from(s.name ?? ''),
            s.payload,
          ])
        : Buffer.from(s.payload);
    parts.push(Buffer.from([s.id, ...leb128(body.length)]), body);
  }
  return Buffer.concat(parts);
}

/** The bytes of every data segment (section id 11). */
function dataSegments(sections: Section[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const s of sections.filter((x) => x.id === 11)) {
    const r = new Reader(s.payload);
    const count = r.u32();
    for (let i = 0; i < count; i++) {
      const flags = r.u32();
      if (flags === 2) r.u32(); // memory index
      if (flags === 0 || flags === 2) {
        // the offset: a constant expression ending with `end` (0x0b)
        for (let op = r.byte(); op !== 0x0b; op = r.byte()) {
          if (op === 0x41 || op === 0x42) r.skipLeb();
          else if (op === 0x23) r.u32();
          else throw new Error(`wasm: unexpected opcode 0x${op.toString(16)} in a data offset`);
        }
      } else if (flags !== 1) {
        throw new Error(`wasm: unknown data segment kind ${flags}`);
      }
      out.push(r.bytes(r.u32()));
    }
  }
  return out;
}

const MARKER_MAGIC = Buffer.from('SpEcV1');
const MARKER_LEN = 14;

/** Spec markers (hex of the 8 hash bytes) found in the data segments. */
function specMarkers(sections: Section[]): Set<string> {
  const found = new Set<string>();
  for (const seg of dataSegments(sections)) {
    const b = Buffer.from(seg);
    for (
      let i = b.indexOf(MARKER_MAGIC);
      i >= 0 && i + MARKER_LEN <= b.length;
      i = b.indexOf(MARKER_MAGIC, i + 1)
    ) {
      found.add(b.subarray(i + 6, i + MARKER_LEN).toString('hex'));
    }
  }
  return found;
}

function metaEntries(sections: Section[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of sections.filter((x) => x.name === 'contractmetav0')) {
    const r = new Reader(s.payload);
    // a stream of ScMetaEntry::ScMetaV0 {key: string, val: string}: kind (u32), then two XDR strings
    while (r.pos < s.payload.length) {
      const be = (b: Uint8Array) => Buffer.from(b).readUInt32BE(0);
      if (be(r.bytes(4)) !== 0) throw new Error('contractmetav0: unknown entry kind');
      const str = () => {
        const n = be(r.bytes(4));
        const v = Buffer.from(r.bytes(n)).toString('utf8');
        r.bytes((4 - (n % 4)) % 4);
        return v;
      };
      const key = str();
      out.set(key, str());
    }
  }
  return out;
}

export interface ShakeResult {
  wasm: Buffer;
  kept: number;
  removed: number;
}

/** Removes the spec entries (types, events) whose marker the code does not carry; functions always stay. */
export function shakeSpec(wasm: Uint8Array): ShakeResult {
  const sections = parseSections(wasm);
  const specIndex = sections.findIndex((s) => s.name === 'contractspecv0');
  if (specIndex < 0) throw new Error('the module has no contractspecv0 section');
  const payload = Buffer.concat(sections.filter((s) => s.name === 'contractspecv0').map((s) => s.payload));
  const entries = new contract.Spec(payload).entries;
  if (metaEntries(sections).get('rssdk_spec_shaking') !== '2') {
    // an SDK without markers: nothing tells which entries are used, keep them all
    return { wasm: Buffer.from(wasm), kept: entries.length, removed: 0 };
  }
  const markers = specMarkers(sections);
  const kept = entries.filter(
    (e) =>
      e.type === 'scSpecEntryFunctionV0' ||
      markers.has(createHash('sha256').update(e.toXdr()).digest().subarray(0, 8).toString('hex')),
  );
  const spec: Section = {
    id: 0,
    name: 'contractspecv0',
    payload: Buffer.concat(kept.map((e) => Buffer.from(e.toXdr()))),
  };
  const out = sections.flatMap((s, i) => (i === specIndex ? [spec] : s.name === 'contractspecv0' ? [] : [s]));
  return { wasm: encodeSections(out), kept: kept.length, removed: entries.length - kept.length };
}

// ---- spec check against pool-interface.ts ----

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

function describeSpecType(t: Json): string {
  if (typeof t === 'string') return t;
  const o = t as Record<string, Json>;
  const [kind, v] = Object.entries(o)[0] as [string, Record<string, Json>];
  switch (kind) {
    case 'bytes_n':
      return `BytesN<${v.n}>`;
    case 'vec':
      return `Vec<${describeSpecType(v.element_type as Json)}>`;
    case 'option':
      return `Option<${describeSpecType(v.value_type as Json)}>`;
    case 'result':
      return `Result<${describeSpecType(v.ok_type as Json)}, ${describeSpecType(v.error_type as Json)}>`;
    case 'udt':
      return String(v.name);
    default:
      return JSON.stringify(t);
  }
}

function describeInterfaceType(t: SpecType): string {
  if (typeof t === 'string') return t;
  if ('bytesN' in t) return `BytesN<${t.bytesN}>`;
  if ('vec' in t) return `Vec<${describeInterfaceType(t.vec)}>`;
  if ('option' in t) return `Option<${describeInterfaceType(t.option)}>`;
  return t.udt;
}

/** A function's result as the interface states it: Result<T, E> → T, Result<(), E> and none → void. */
function resultType(outputs: Json[]): string {
  if (outputs.length === 0) return 'void';
  const d = describeSpecType(outputs[0] as Json);
  const m = /^Result<(.*), [A-Za-z0-9_]+>$/.exec(d);
  return m ? (m[1] as string) : d;
}

/** Mismatches between a module's spec and the interface (function names, arguments, results, errors, structs). */
export function specMismatches(wasm: Uint8Array, iface: ContractInterface): string[] {
  const json = contract.Spec.fromWasm(wasm).entries.map(
    (e) => e.toJson() as Record<string, Record<string, Json>>,
  );
  const problems: string[] = [];
  const fns = new Map(
    json.filter((e) => e.function_v0).map((e) => [String(e.function_v0?.name), e.function_v0]),
  );
  const want = new Set(iface.functions.map((f) => f.name));
  const have = new Set(fns.keys());
  for (const n of want) if (!have.has(n)) problems.push(`function ${n} is missing`);
  for (const n of have) if (!want.has(n)) problems.push(`function ${n} is not in the interface`);
  for (const f of iface.functions) {
    const g = fns.get(f.name);
    if (!g) continue;
    const inputs = (g.inputs as { name: string; type: Json }[]).map(
      (i) => `${i.name}: ${describeSpecType(i.type)}`,
    );
    const wantInputs = f.inputs.map(([n, t]) => `${n}: ${describeInterfaceType(t)}`);
    if (inputs.join(', ') !== wantInputs.join(', ')) {
      problems.push(`${f.name}(${inputs.join(', ')}) should be ${f.name}(${wantInputs.join(', ')})`);
    }
    const out = resultType(g.outputs as Json[]);
    const wantOut = f.output === undefined ? 'void' : describeInterfaceType(f.output);
    if (out !== wantOut) problems.push(`${f.name} returns ${out}, the interface ${wantOut}`);
  }
  for (const e of iface.errors) {
    const spec = json.find(
      (x) => x.udt_error_enum_v0 && x.udt_error_enum_v0.name === e.name,
    )?.udt_error_enum_v0;
    if (!spec) {
      problems.push(`error enum ${e.name} is missing`);
      continue;
    }
    const cases = Object.fromEntries(
      (spec.cases as { name: string; value: number }[]).map((c) => [c.name, c.value]),
    );
    if (JSON.stringify(cases) !== JSON.stringify(e.cases)) {
      problems.push(
        `error enum ${e.name} is ${JSON.stringify(cases)}, the interface ${JSON.stringify(e.cases)}`,
      );
    }
  }
  for (const s of iface.structs) {
    const spec = json.find((x) => x.udt_struct_v0 && x.udt_struct_v0.name === s.name)?.udt_struct_v0;
    if (!spec) {
      problems.push(`struct ${s.name} is missing`);
      continue;
    }
    const fields = (spec.fields as { name: string; type: Json }[]).map(
      (f) => `${f.name}: ${describeSpecType(f.type)}`,
    );
    const wantFields = [...s.fields]
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .map(([n, t]) => `${n}: ${describeInterfaceType(t)}`);
    if (fields.join(', ') !== wantFields.join(', ')) {
      problems.push(`struct ${s.name} {${fields.join(', ')}} should be {${wantFields.join(', ')}}`);
    }
  }
  return problems;
}

// ---- build ----

export interface BuildOptions {
  /** rebuild even when the sources are unchanged */
  force?: boolean;
}

/**
 * `cargo build --release` of `packages` of the contracts' workspace for wasm32v1-none (unshaken modules);
 * returns the folder the modules are in. Packages built together share the workspace's compiled crates.
 */
export function cargoBuildWasm(packages: string[], tc: Toolchain = ensureToolchain()): string {
  const jobs = String(Math.min(availableParallelism(), Number(process.env.CARGO_BUILD_JOBS) || 2));
  const args = ['build', '--release', '--locked', '--target', TARGET, '-j', jobs, ...tc.args];
  for (const p of packages) args.push('-p', p);
  console.log(`build-contracts: cargo ${args.join(' ')} (a few minutes the first time)…`);
  execFileSync(tc.cargo, args, { cwd: CONTRACTS_DIR, stdio: 'inherit', env: { ...process.env, ...tc.env } });
  return join(ROOT, 'target', TARGET, 'release');
}

/** Builds (when needed) and checks build/contracts/<name>.wasm for the four contracts; returns their paths. */
export function buildContracts(options: BuildOptions = {}): Record<string, string> {
  const tc = ensureToolchain();
  const outputs = Object.fromEntries(
    CONTRACTS.map((c) => [c.name, join(CONTRACTS_OUT_DIR, `${c.name}.wasm`)]),
  );
  const hash = sourceHash(tc);
  const fresh =
    !options.force &&
    existsSync(STAMP) &&
    readFileSync(STAMP, 'utf8') === hash &&
    Object.values(outputs).every((p) => existsSync(p));
  if (fresh) {
    console.log('build-contracts: contracts are up to date');
  } else {
    const started = Date.now();
    const release = cargoBuildWasm(
      CONTRACTS.map((c) => c.pkg),
      tc,
    );
    mkdirSync(CONTRACTS_OUT_DIR, { recursive: true });
    for (const c of CONTRACTS) {
      const built = join(release, `${c.name}.wasm`);
      const shaken = shakeSpec(readFileSync(built));
      writeFileSync(outputs[c.name] as string, shaken.wasm);
      console.log(
        `build-contracts: ${c.name}: spec keeps ${shaken.kept} entries (${shaken.removed} unused removed)`,
      );
    }
    writeFileSync(STAMP, hash);
    console.log(`build-contracts: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }

  const problems: string[] = [];
  for (const c of CONTRACTS) {
    const path = outputs[c.name] as string;
    const size = statSync(path).size;
    const pct = ((100 * size) / MAX_WASM_BYTES).toFixed(1);
    console.log(`build-contracts: ${relative(ROOT, path)} ${size} bytes (${pct}% of ${MAX_WASM_BYTES})`);
    if (size > MAX_WASM_BYTES)
      problems.push(`${c.name}.wasm is ${size} bytes, over the ${MAX_WASM_BYTES}-byte limit`);
    for (const p of specMismatches(readFileSync(path), c.iface)) problems.push(`${c.name}: ${p}`);
  }
  if (problems.length > 0) throw new Error(`build-contracts:\n  ${problems.join('\n  ')}`);
  return outputs;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    buildContracts({ force: process.argv.includes('--force') });
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}
