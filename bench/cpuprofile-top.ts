import fs from 'node:fs';
import path from 'node:path';

/**
 * Reads V8 `.cpuprofile` files (from `node --cpu-prof`) and prints the functions with the most
 * self time, summed over every node of the call tree and every file given, with their share.
 * Usage: node dist/bench/cpuprofile-top.js FILE.cpuprofile… [--top N] [--by file] [--total]
 * `--by file` sums by script instead (which module, or which package in node_modules).
 * `--total` sums each function's total time instead (its own and its callees', once per sample
 * however often it recurs), without `(idle)`, as a share of the busy time: which step holds the
 * time, e.g. `prepare` of the send path against `persist`. Async steps show under the
 * microtask or timer that resumed them, not under their first caller.
 */
interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

function isProfile(v: unknown): v is Profile {
  return typeof v === 'object' && v !== null && Array.isArray((v as { nodes?: unknown }).nodes);
}

function shortUrl(url: string): string {
  if (url === '') return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

function main(argv: readonly string[]): void {
  const files: string[] = [];
  let top = 40;
  let byFile = false;
  let total = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--top') top = Number(argv[++i] ?? 40);
    else if (a === '--by') byFile = argv[++i] === 'file';
    else if (a === '--total') total = true;
    else files.push(a);
  }
  if (files.length === 0) {
    console.error('usage: cpuprofile-top FILE.cpuprofile… [--top N] [--by file]');
    process.exitCode = 1;
    return;
  }
  const selfUs = new Map<string, number>();
  let totalUs = 0;
  for (const file of files) {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (!isProfile(parsed)) throw new Error(`${file}: not a .cpuprofile`);
    const byId = new Map(parsed.nodes.map((n) => [n.id, n]));
    const parentOf = new Map<number, number>();
    for (const n of parsed.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
    // Self time of a sample is the delta that follows it; without deltas, hit counts × interval.
    const samples = parsed.samples ?? [];
    const deltas = parsed.timeDeltas ?? [];
    for (let i = 0; i < samples.length; i++) {
      const node = byId.get(samples[i] ?? -1);
      if (node === undefined) continue;
      const us = deltas[i + 1] ?? 0;
      const keyOf = (f: CallFrame) =>
        byFile
          ? shortUrl(f.url)
          : `${f.functionName || '(anonymous)'}  ${shortUrl(f.url)}${f.url === '' ? '' : `:${f.lineNumber + 1}`}`;
      if (!total) {
        selfUs.set(keyOf(node.callFrame), (selfUs.get(keyOf(node.callFrame)) ?? 0) + us);
        totalUs += us;
        continue;
      }
      if (node.callFrame.functionName === '(idle)') continue;
      totalUs += us;
      const seen = new Set<string>();
      for (let id: number | undefined = node.id; id !== undefined; id = parentOf.get(id)) {
        const frame = byId.get(id)?.callFrame;
        if (frame === undefined) break;
        const key = keyOf(frame);
        if (seen.has(key)) continue;
        seen.add(key);
        selfUs.set(key, (selfUs.get(key) ?? 0) + us);
      }
    }
  }
  const rows = [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, top);
  const more = files.length > 1 ? ` and ${files.length - 1} more` : '';
  const what = total ? 'busy (total time per function)' : 'sampled';
  console.log(`${path.basename(files[0] ?? '')}${more}: ${(totalUs / 1000).toFixed(0)} ms ${what}`);
  for (const [key, us] of rows) {
    console.log(
      `${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / Math.max(totalUs, 1)).toFixed(1).padStart(5)}%  ${key}`,
    );
  }
}

main(process.argv.slice(2));
