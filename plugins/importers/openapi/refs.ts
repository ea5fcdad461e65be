import { invalid, isObject } from '../../../kernel/public.js';

type Obj = Record<string, unknown>;
/** Longest `$ref` → `$ref` chain followed before it is taken for a loop. */
const MAX_HOPS = 32;

/** A node after following its `$ref`s, and where it was found. `external` when a ref leaves the document. */
export type Resolved = { node: unknown; where: string; ref: string | null } | { external: string };

/**
 * Resolves local `$ref`s (`#/components/schemas/Pet`) within one document. Refs to other files
 * or URLs are reported as external and never fetched. A chain of refs that never reaches a value
 * (`A → B → A`) or a ref to nothing is a 422 naming the location.
 */
export class Refs {
  readonly #cache = new Map<string, unknown>();

  constructor(private readonly doc: unknown) {}

  /** The value a JSON pointer names; a 422 at `where` when it names nothing. */
  pointer(ref: string, where: string): unknown {
    if (this.#cache.has(ref)) return this.#cache.get(ref);
    let node: unknown = this.doc;
    for (const raw of ref.slice(2).split('/')) {
      if (ref === '#') break;
      let key: string;
      try {
        key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
      } catch {
        throw invalid(`${where}.$ref`, `'${ref.slice(0, 200)}' has a malformed percent-escape`);
      }
      node = Array.isArray(node) ? node[Number(key)] : isObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
      if (node === undefined) throw invalid(`${where}.$ref`, `'${ref.slice(0, 200)}' names nothing in this document`);
    }
    this.#cache.set(ref, node);
    return node;
  }

  /** Follows `node`'s `$ref` chain to a value. */
  resolve(node: unknown, where: string): Resolved {
    let ref: string | null = null;
    const chain: string[] = [];
    while (isObject(node) && typeof node.$ref === 'string') {
      const next = node.$ref;
      if (!next.startsWith('#')) return { external: next };
      if (chain.includes(next) || chain.length >= MAX_HOPS) {
        throw invalid(`${where}.$ref`, `'${next.slice(0, 200)}' loops back to itself through ${chain.join(' → ')}; a $ref must lead to a value`);
      }
      chain.push(next);
      ref = next;
      node = this.pointer(next, where);
    }
    return { node, where, ref };
  }

  /** Like {@link resolve}, for nodes that must be objects (parameters, responses, media types). Null for external refs. */
  object(node: unknown, where: string): Obj | null {
    const r = this.resolve(node, where);
    if ('external' in r) return null;
    if (!isObject(r.node)) throw invalid(where, 'must be an object');
    return r.node;
  }
}
