import { answerAlike, signatures } from './answers.js';
import { CARDINALITY, rareValues } from './cardinality.js';
import { enumMembers } from './enums.js';
import type { SegmentShape } from './shapes.js';

/** One request's path: its segments and their id shapes; and what it was answered, when known. */
export interface PathSample {
  segments: readonly string[];
  shapes: readonly (SegmentShape | null)[];
  method?: string;
  status?: number;
  /** Key paths of the JSON response body (see `keyPaths`); null or absent when there was none. */
  body?: readonly string[] | null;
}

/** Rare values whose responses are compared before they are taken for ids (see `answerAlike`). */
const VETO_SAMPLE = 32;

const isParam = (s: string) => s.startsWith('{');

/** `payment-intents` / `paymentIntents` / `payment_intents` → `payment_intent`. */
export function singular(word: string): string {
  const snake = word
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
  if (/ies$/.test(snake)) return snake.replace(/ies$/, 'y');
  if (/(ss|us|is)$/.test(snake)) return snake;
  if (/(ches|shes|xes|sses)$/.test(snake)) return snake.replace(/es$/, '');
  return snake.replace(/s$/, '');
}

const looksPlural = (word: string) => /[a-z]s$/i.test(word) && !/(ss|us|is)$/i.test(word);

/** The parameter name for a position: from the collection before it (`customers` → `customer_id`). */
function paramName(prefix: readonly string[], shapes: ReadonlySet<SegmentShape | null>, taken: ReadonlySet<string>): string {
  const before = prefix.at(-1);
  let base = shapes.size === 1 && shapes.has('email') ? 'email' : before && !isParam(before) && /[A-Za-z]/.test(before) ? `${singular(before)}_id` : 'id';
  if (!/^[a-z]/.test(base)) base = `p_${base}`;
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
  return name;
}

/**
 * The word values at one node (value and its requests) that are ids by cardinality (see
 * `rareValues`; `shaped` id-shaped values sit beside them), unless their responses say they are
 * different resources asked for seldom (see `answerAlike`).
 */
function idsByCardinality(samples: readonly PathSample[], words: readonly [string, number[]][], depth: number, minDistinct: number, shaped: number): Set<string> {
  const rare = rareValues(new Map(words.map(([value, g]) => [value, g.length])), minDistinct, shaped);
  if (!rare.size) return rare;
  // The first values seen tell as well as all of them, and keep this cheap under big collections.
  const family = words.filter(([value]) => rare.has(value)).slice(0, VETO_SAMPLE);
  const answers = signatures(samples, family.map(([, g]) => g), depth);
  return answerAlike(answers) ? rare : new Set();
}

/**
 * URI templates for a set of request paths, one per path. Walks the paths as a tree, level by
 * level: a segment shaped like an id (number, UUID, ULID, hex, prefixed id, generated token,
 * e-mail) is a parameter; among the other values under one node, those that rarely repeat are
 * a parameter too when there are enough of them (cardinality: endpoint names recur across
 * requests, ids do not; see `rareValues`): a few under a collection (a plural segment), many
 * anywhere else. Under a collection, values that recur but whose subtrees answer the same
 * response schemas are a parameter with a few values (an enum; see `enumMembers`).
 * Everything under a parameter is grouped before the next level is judged, so sub-resources
 * of `/repos/{owner}/{repo}` are counted across every repository. Knows no API by name.
 */
export function inferTemplates(samples: readonly PathSample[]): string[] {
  const out = new Array<string>(samples.length);
  const visit = (idx: number[], depth: number, prefix: string[]) => {
    const groups = new Map<string, number[]>();
    for (const i of idx) {
      const segs = samples[i]!.segments;
      if (segs.length === depth) out[i] = `/${prefix.join('/')}`;
      else (groups.get(segs[depth]!) ?? groups.set(segs[depth]!, []).get(segs[depth]!)!).push(i);
    }
    if (!groups.size) return;
    const params: number[] = [];
    const paramShapes = new Set<SegmentShape | null>();
    const words: [string, number[]][] = [];
    for (const [value, group] of groups) {
      const shape = samples[group[0]!]!.shapes[depth] ?? null;
      if (shape) {
        params.push(...group);
        paramShapes.add(shape);
      } else words.push([value, group]);
    }
    const before = prefix.at(-1);
    const collection = before !== undefined && !isParam(before) && looksPlural(before);
    /** Moves the words among `values` to the parameter; the rest stay literals. */
    const toParam = (list: [string, number[]][], values: ReadonlySet<string>) =>
      list.filter(([value, group]) => {
        if (!values.has(value)) return true;
        params.push(...group);
        paramShapes.add(null);
        return false;
      });
    let literals = toParam(words, idsByCardinality(samples, words, depth, collection ? CARDINALITY.minDistinct : CARDINALITY.minDistinctAnywhere, groups.size - words.length));
    // Under a collection, names that recur yet answer alike are one parameter with a few values.
    if (collection) literals = toParam(literals, enumMembers(samples, literals, depth));
    if (params.length) {
      const taken = new Set(prefix.filter(isParam).map((p) => p.slice(1, -1)));
      visit(params, depth + 1, [...prefix, `{${paramName(prefix, paramShapes, taken)}}`]);
    }
    for (const [value, group] of literals) visit(group, depth + 1, [...prefix, value]);
  };
  visit(
    samples.map((_, i) => i),
    0,
    [],
  );
  return out;
}
