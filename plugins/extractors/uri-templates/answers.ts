import type { PathSample } from './infer.js';

/** Least Jaccard similarity of two endpoints' response key paths that reads as one schema (responses differ in optional fields). */
export const MIN_LIKENESS = 0.5;

/** What one value's subtree answers: endpoint (status, method, rest of the path) → key paths of its response bodies. */
export type Signature = Map<string, Set<string>>;

/**
 * What each of a family of sibling values at `depth` answers. The rest of each path is lined up
 * across the family position by position: a segment is `{}` when it is id-shaped or seen below
 * one member only (that member's own id, `/packages/npm/left-pad`), and stays when seen below
 * several (structure they share, `/versions`).
 */
export function signatures(samples: readonly PathSample[], family: readonly (readonly number[])[], depth: number): Signature[] {
  // Per position after the family's own: the member a value was seen below, or -1 for several.
  const below: Map<string, number>[] = [];
  family.forEach((group, member) => {
    for (const i of group) {
      const segs = samples[i]!.segments;
      for (let j = depth + 1; j < segs.length; j++) {
        const at = (below[j - depth - 1] ??= new Map());
        const seen = at.get(segs[j]!);
        at.set(segs[j]!, seen === undefined || seen === member ? member : -1);
      }
    }
  });
  return family.map((group) => {
    const sig: Signature = new Map();
    for (const i of group) {
      const s = samples[i]!;
      if (!s.body?.length) continue;
      const rest = s.segments.slice(depth + 1).map((v, k) => (s.shapes[depth + 1 + k] || below[k]!.get(v) !== -1 ? '{}' : v));
      const key = `${s.status ?? ''} ${s.method ?? ''} /${rest.join('/')}`;
      const keys = sig.get(key) ?? sig.set(key, new Set()).get(key)!;
      for (const k of s.body) keys.add(k);
    }
    return sig;
  });
}

/** Shared key paths over all key paths of either. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let both = 0;
  for (const k of small) if (large.has(k)) both++;
  return both / (a.size + b.size - both);
}

/**
 * False when most of the values that answered at the same endpoint answered differently: each
 * value's key paths beside those most of its peers there have (paths at least half of them
 * carry). Ids of one collection answer one schema; different resources asked for rarely
 * (`/repos/{r}/topics`, `/repos/{r}/languages`) answer different ones. True when nothing tells.
 */
export function answerAlike(sigs: readonly Signature[]): boolean {
  const byEndpoint = new Map<string, Set<string>[]>();
  for (const sig of sigs) for (const [key, keys] of sig) (byEndpoint.get(key) ?? byEndpoint.set(key, []).get(key)!).push(keys);
  let alike = 0;
  let unlike = 0;
  for (const members of byEndpoint.values()) {
    if (members.length < 2) continue;
    const seen = new Map<string, number>();
    for (const keys of members) for (const k of keys) seen.set(k, (seen.get(k) ?? 0) + 1);
    const common = new Set([...seen].filter(([, n]) => 2 * n >= members.length).map(([k]) => k));
    for (const keys of members) {
      if (jaccard(keys, common) >= MIN_LIKENESS) alike++;
      else unlike++;
    }
  }
  return unlike <= alike;
}
