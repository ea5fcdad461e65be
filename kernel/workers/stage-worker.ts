import { Piscina } from 'piscina';
import { runChain } from '../chain.js';
import { isPluginDescriptor, resolvePluginOptions } from '../plugin.js';
import { decodeBatch, encodeBatch } from './batch.js';

/** One call in a worker chain: a plugin (module URL and name), its options, the export to call. */
export interface StageStep {
  plugin: string;
  name: string;
  export: string;
  options: unknown;
}

/** What the pool sends a worker: plain data, the batch as a moved buffer (see batch.ts). */
export interface StageTask {
  steps: readonly StageStep[];
  /** Per-run context (e.g. the tenant's scrub key and rules), given to every step. */
  context: unknown;
  payload: ArrayBuffer;
}

// One plugin instance per (module, name, options) per thread, built on first use.
const instances = new Map<string, Promise<Record<string, unknown>>>();

async function instanceFor(step: StageStep): Promise<Record<string, unknown>> {
  const key = `${step.plugin}\0${step.name}\0${JSON.stringify(step.options)}`;
  let inst = instances.get(key);
  if (!inst) {
    inst = (async () => {
      const mod = (await import(step.plugin)) as { default?: unknown };
      const all = Array.isArray(mod.default) ? mod.default : [mod.default];
      const descriptor = all.find((d) => isPluginDescriptor(d) && d.name === step.name);
      if (!isPluginDescriptor(descriptor)) throw new Error(`worker: module ${step.plugin} has no plugin '${step.name}'`);
      if (!descriptor.pure) throw new Error(`worker: plugin '${step.name}' is not pure`);
      const options = resolvePluginOptions(descriptor, step.options);
      const built = await descriptor.setup({
        options: options as never,
        get: () => {
          throw new Error(`worker: plugin '${step.name}' cannot ask for other plugins inside a worker`);
        },
      });
      return built as unknown as Record<string, unknown>;
    })();
    instances.set(key, inst);
  }
  return inst;
}

/** Piscina entry: decode the batch, pass it through the chain, send the result back as a moved buffer. */
export default async function runStage(task: StageTask): Promise<unknown> {
  const links = await Promise.all(task.steps.map(async (step) => ({ name: step.name, instance: await instanceFor(step), export: step.export })));
  const out = await runChain(links, decodeBatch(task.payload), task.context);
  return Piscina.move(encodeBatch(out).buffer);
}
