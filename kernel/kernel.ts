import { loadPluginModules, PluginRegistry } from './plugin.js';
import { PipelineRunner } from './pipeline.js';
import { WorkerPool } from './workers/pool.js';

/** The booted core: plugins, the pipeline runner and the worker pool behind it. @public */
export interface Kernel {
  readonly plugins: PluginRegistry;
  readonly pipelines: PipelineRunner;
  readonly pool: WorkerPool;
  close(): Promise<void>;
}

/**
 * Creates the kernel: registers the built-in plugin modules and the external ones (npm names or
 * paths), boots them (checks, setup, freeze), and opens the worker pool (threads start lazily).
 * @public
 */
export async function createKernel(opts: { builtins: readonly string[]; external?: readonly string[]; workers?: number; baseDir?: string }): Promise<Kernel> {
  const plugins = new PluginRegistry();
  await loadPluginModules(plugins, opts.builtins);
  await loadPluginModules(plugins, opts.external ?? [], opts.baseDir);
  await plugins.boot();
  const pool = new WorkerPool(opts.workers ?? 0);
  return { plugins, pool, pipelines: new PipelineRunner(plugins, pool), close: () => pool.close() };
}
