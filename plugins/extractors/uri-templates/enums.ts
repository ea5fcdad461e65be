import { jaccard, MIN_LIKENESS, signatures, type Signature } from './answers.js';
import type { PathSample } from './infer.js';

/** Fewest sibling values that can make one parameter by answering alike: two could be two resources that look the same. */
export const MIN_ENUM_MEMBERS = 3;

/**
 * 1 when two values answer alike wherever both answered, at least once below a parameter
 * (`/{name}`, not only the value itself); -1 when they answer differently anywhere (one
 * endpoint is enough: different resources often share generic sub-resources, `/comments`,
 * `/tags`, that answer alike); 0 when nothing tells. A list alone is no evidence: different
 * collections often list the same kind of thing (`followers`, `following`).
 */
function likeness(a: Signature, b: Signature): -1 | 0 | 1 {
  let evidence = false;
  for (const [key, ka] of a) {
    const kb = b.get(key);
    if (!kb) continue;
    if (jaccard(ka, kb) < MIN_LIKENESS) return -1;
    if (key.includes('{}')) evidence = true;
  }
  return evidence ? 1 : 0;
}

/** Groups of `alive` members linked by answering alike. */
function linked(alive: readonly number[], rel: readonly (readonly number[])[]): number[][] {
  const root = new Map(alive.map((i) => [i, i]));
  const find = (i: number): number => (root.get(i) === i ? i : find(root.get(i)!));
  for (const i of alive) for (const j of alive) if (i < j && rel[i]![j] === 1) root.set(find(i), find(j));
  const groups = new Map<number, number[]>();
  for (const i of alive) (groups.get(find(i)) ?? groups.set(find(i), []).get(find(i))!).push(i);
  return [...groups.values()];
}

/**
 * Sibling words under a collection that are one parameter with a few values (an enum:
 * `/packages/{npm|maven|docker}/{name}`): they recur like endpoint names, but their subtrees
 * answer the same schemas at the same places. Different resources answer different schemas
 * (`/customers/{id}` a customer, `/products/{id}` a product), so they stay apart. Values are
 * linked by answering alike; from a group with members that answer differently, the member
 * unlike the most others leaves (it stays a literal) until none do. The largest group left of
 * at least {@link MIN_ENUM_MEMBERS} values; empty when there is none.
 */
export function enumMembers(samples: readonly PathSample[], family: readonly (readonly [string, readonly number[]])[], depth: number): Set<string> {
  if (family.length < MIN_ENUM_MEMBERS) return new Set();
  const sigs = signatures(samples, family.map(([, g]) => g), depth);
  const rel = sigs.map(() => new Array<number>(sigs.length).fill(0));
  for (let i = 0; i < sigs.length; i++) for (let j = i + 1; j < sigs.length; j++) rel[i]![j] = rel[j]![i] = likeness(sigs[i]!, sigs[j]!);
  let alive = family.map((_, i) => i);
  for (;;) {
    const clashes = (i: number, group: readonly number[]) => group.filter((j) => rel[i]![j] === -1).length;
    const worst = linked(alive, rel)
      .flatMap((group) => group.map((i) => [i, clashes(i, group)] as const))
      .reduce<readonly [number, number]>((w, c) => (c[1] > w[1] ? c : w), [-1, 0]);
    if (worst[0] === -1) break;
    alive = alive.filter((i) => i !== worst[0]);
  }
  const best = linked(alive, rel).reduce<number[]>((b, g) => (g.length > b.length ? g : b), []);
  return best.length >= MIN_ENUM_MEMBERS ? new Set(best.map((i) => family[i]![0])) : new Set();
}
