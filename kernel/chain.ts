import { scrubWithAll, type ScrubContext, type Scrubber, type ScrubbedRecord } from './contracts/scrubber.js';

/** One call of a stage's chain: a booted plugin instance, its name, and the export to call. */
export interface ChainLink {
  name: string;
  instance: object;
  export: string;
}

const isScrubStep = (l: ChainLink) => l.export === 'scrubBatch' && typeof (l.instance as Partial<Scrubber>).visitor === 'function';

/**
 * Passes a batch through each link in turn (`export(batch, context)`), the output of one the
 * input of the next. Consecutive scrubber steps share one walk of each record.
 */
export async function runChain(links: readonly ChainLink[], batch: unknown[], context: unknown): Promise<unknown[]> {
  let out = batch;
  for (let i = 0; i < links.length; ) {
    let j = i;
    while (j < links.length && isScrubStep(links[j]!)) j++;
    if (j > i) {
      out = scrubWithAll(links.slice(i, j).map((l) => l.instance as Scrubber), out as ScrubbedRecord[], context as ScrubContext);
      i = j;
      continue;
    }
    const link = links[i++]!;
    const fn = (link.instance as Record<string, unknown>)[link.export];
    if (typeof fn !== 'function') throw new Error(`plugin '${link.name}' has no function '${link.export}'`);
    out = await (fn as (b: unknown[], c: unknown) => unknown[] | Promise<unknown[]>).call(link.instance, out, context);
    if (!Array.isArray(out)) throw new Error(`'${link.name}'.${link.export} must return an array`);
  }
  return out;
}
