// Summarises a V8 CPU profile (.cpuprofile, e.g. from bench/pay's BENCH_CPU_PROFILE): the functions with the
// most self time, the packages or source folders they belong to, and the functions of this repository with the
// most total time (their callees included). Usage:
//   npx tsx bench/pay/profile-summary.ts <file.cpuprofile> [top=30]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: profile-summary.ts <file.cpuprofile> [top=30]');
  process.exit(2);
}
const top = Number(topArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

/** A source's group: the npm package it is in, else its folder under the repository, else the V8 category. */
function groupOf(url: string, name: string): string {
  if (!url) return `(${name || 'anonymous'})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return url;
  const repo = /\/(src|contracts|bench|test)\/(.*)\/[^/]+$/.exec(url);
  return repo ? `${repo[1]}/${repo[2]}` : url;
}

const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const keyOf = (f: ProfileNode['callFrame']) =>
  `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.replace(/^.*\/(node_modules|src|contracts)\//, '$1/')}:${f.lineNumber + 1}` : ''}`;
const ours = (url: string) => /\/(src|contracts)\//.test(url) && !url.includes('node_modules');
// Total time of this repository's functions: each sample counts once for every distinct function on its stack.
const inclusive = new Map<string, number>();
profile.samples.forEach((leaf, i) => {
  const seen = new Set<string>();
  for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
    const f = byId.get(id)!.callFrame;
    if (!ours(f.url)) continue;
    const k = keyOf(f);
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
});

const fns = new Map<string, number>();
const groups = new Map<string, number>();
let total = 0;
for (const [id, us] of selfUs) {
  const { callFrame: f } = byId.get(id)!;
  const key = keyOf(f);
  fns.set(key, (fns.get(key) ?? 0) + us);
  const g = groupOf(f.url, f.functionName);
  groups.set(g, (groups.get(g) ?? 0) + us);
  total += us;
}
const show = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([k, us]) =>
        `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`,
    )
    .join('\n');
console.log(
  `${(total / 1000).toFixed(0)} ms sampled\n\nby package or folder (self time):\n${show(groups, top)}`,
);
console.log(`\nby function (self time):\n${show(fns, top)}`);
console.log(`\nthis repository's functions (total time, callees included):\n${show(inclusive, top)}`);
