/** Tuning of the cardinality rule (see {@link rareValues}). */
export const CARDINALITY = {
  /** Fewest distinct values that can make a parameter under a collection (a plural segment). */
  minDistinct: 3,
  /**
   * Fewest under any other segment: under a parameter a word is more likely a sub-resource
   * (`/customers/{id}/sources`), under the root or a singular word an endpoint name.
   */
  minDistinctAnywhere: 8,
  /** Distinct values per request at least this: values rarely repeat, as ids do and endpoint names do not. */
  minDistinctRatio: 0.5,
};

/**
 * The word values at one position of the path tree that read as ids by how often they were
 * asked for (`counts`: requests per value). Endpoint names recur, since every request under one
 * passes through it; ids do not. Values asked for more than twice the mean are names; the rest
 * are ids when there are at least `minDistinct` of them, counting the `shaped` id-shaped values
 * beside them (they show that this position holds ids), and they rarely repeat (distinct values
 * at least half their requests). Judging the rare values apart from the frequent ones lets a
 * few names (`add`, `remove`) sit beside many ids without hiding them.
 */
export function rareValues(counts: ReadonlyMap<string, number>, minDistinct: number, shaped = 0): Set<string> {
  let requests = 0;
  for (const n of counts.values()) requests += n;
  const cut = Math.max(2, Math.ceil((2 * requests) / counts.size));
  const rare = [...counts].filter(([, n]) => n <= cut);
  const rareRequests = rare.reduce((sum, [, n]) => sum + n, 0);
  if (!rare.length || rare.length + shaped < minDistinct || rare.length / rareRequests < CARDINALITY.minDistinctRatio) return new Set();
  return new Set(rare.map(([value]) => value));
}
