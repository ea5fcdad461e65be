import { Piscina } from 'piscina';
import { isPluginDescriptor, resolvePluginOptions } from '../plugin.js';

/** What the pool sends a worker: plain data, the batch as a moved JSON buffer. */
export interface StageTask {
  plugin: string;
  name: string;
  export: string;
  options: unknown;
  payload: ArrayBuffer;
}

// One plugin instance per (module, name, options) per thread, built on first use.
const instances = new Map<string, Promise<Record<string, unknown>>>();

async function instanceFor(task: StageTask): Promise<Record<string, unknown>> {
  const key = `${task.plugin}\0${task.name}\0${JSON.stringify(task.options)}`;
  let inst = instances.get(key);
  if (!inst) {
    inst = (async () => {
      const mod = (await import(task.plugin)) as { default?: unknown };
      const all = Array.isArray(mod.default) ? mod.default : [mod.default];
      const descriptor = all.find((d) => isPluginDescriptor(d) && d.name === task.name);
      if (!isPluginDescriptor(descriptor)) throw new Error(`worker: module ${task.plugin} has no plugin '${task.name}'`);
      if (!descriptor.pure) throw new Error(`worker: plugin '${task.name}' is not pure`);
      const options = resolvePluginOptions(descriptor, task.options);
      const built = await descriptor.setup({
        options: options as never,
        get: () => {
          throw new Error(`worker: plugin '${task.name}' cannot ask for other plugins inside a worker`);
        },
      });
      return built as unknown as Record<string, unknown>;
    })();
    instances.set(key, inst);
  }
  return inst;
}

/** Piscina entry: decode the batch, call the plugin export, send the result back as a moved buffer. */
export default async function runStage(task: StageTask): Promise<unknown> {
  const instance = await instanceFor(task);
  const fn = instance[task.export];
  if (typeof fn !== 'function') throw new Error(`worker: plugin '${task.name}' has no function '${task.export}'`);
  const batch = JSON.parse(new TextDecoder().decode(task.payload)) as unknown[];
  const out = await (fn as (b: unknown[]) => unknown[] | Promise<unknown[]>).call(instance, batch);
  const encoded = new TextEncoder().encode(JSON.stringify(out));
  return Piscina.move(encoded.buffer as ArrayBuffer);
}
