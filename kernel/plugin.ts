import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import semver from 'semver';
import { CONTRACT_MEMBERS, PLUGIN_KINDS, type PluginContracts, type PluginKind } from './contracts/index.js';

/** The kernel's own version; plugins name the range they work with in `kernel`. @public */
export const KERNEL_VERSION = '1.0.0';

/** What `setup` receives. @public */
export interface PluginSetupContext<O> {
  options: O;
  /** Another plugin's contract, by name; only plugins named in `dependsOn` may be asked for. */
  get<K extends PluginKind>(name: string, kind: K): PluginContracts[K];
}

/** A plugin descriptor. Importing it does nothing; `setup` builds the contract at boot. @public */
export interface PluginDescriptor<K extends PluginKind = PluginKind, S extends TSchema = TSchema> {
  readonly __understudyPlugin: true;
  name: string;
  kind: K;
  version: string;
  /** semver range of the kernel this plugin works with; default any 1.x. */
  kernel: string;
  dependsOn: readonly string[];
  /** TypeBox schema of the options; defaults in the schema are applied. */
  options: S | undefined;
  /** Pure plugins have no I/O and no shared state, so pipeline stages may run them in worker threads. */
  pure: boolean;
  setup(ctx: PluginSetupContext<Static<S>>): PluginContracts[K] | Promise<PluginContracts[K]>;
}

/** Build a plugin descriptor (see docs/plugins.md). @public */
export function definePlugin<K extends PluginKind, S extends TSchema = TSchema>(spec: {
  name: string;
  kind: K;
  version: string;
  kernel?: string;
  dependsOn?: readonly string[];
  options?: S;
  pure?: boolean;
  setup(ctx: PluginSetupContext<Static<S>>): PluginContracts[K] | Promise<PluginContracts[K]>;
}): PluginDescriptor<K, S> {
  return {
    __understudyPlugin: true,
    name: spec.name,
    kind: spec.kind,
    version: spec.version,
    kernel: spec.kernel ?? '^1.0.0',
    dependsOn: spec.dependsOn ?? [],
    options: spec.options,
    pure: spec.pure ?? false,
    setup: spec.setup,
  };
}

/** True when `value` was built by {@link definePlugin}. @public */
export function isPluginDescriptor(value: unknown): value is PluginDescriptor {
  return typeof value === 'object' && value !== null && (value as { __understudyPlugin?: unknown }).__understudyPlugin === true;
}

/** A plugin the registry has booted. @public */
export interface LoadedPlugin<K extends PluginKind = PluginKind> {
  descriptor: PluginDescriptor<K>;
  /** Module specifier it was loaded from (a file URL or package name), so workers can load it again. */
  source: string | null;
  options: unknown;
  instance: PluginContracts[K];
}

interface PendingPlugin {
  descriptor: PluginDescriptor;
  source: string | null;
  options: unknown;
}

const NAME_RE = /^[a-z0-9][a-z0-9._/@-]{0,127}$/;

/** Validates a plugin's options against its schema, applying defaults. Throws a message naming the plugin. @public */
export function resolvePluginOptions(descriptor: PluginDescriptor, raw: unknown): unknown {
  if (!descriptor.options) return raw ?? {};
  const value = Value.Default(descriptor.options, structuredClone(raw ?? {}));
  if (!Value.Check(descriptor.options, value)) {
    const first = Value.Errors(descriptor.options, value).First();
    throw new Error(`plugin '${descriptor.name}': option ${first?.path || '(root)'} ${first?.message ?? 'is invalid'}; fix the options passed to register().`);
  }
  return value;
}

/**
 * Holds plugins: `register()` records, `boot()` checks names, kernel ranges, dependencies,
 * options and contracts, runs each `setup` in dependency order, and freezes.
 * @public
 */
export class PluginRegistry {
  #pending: PendingPlugin[] = [];
  #loaded = new Map<string, LoadedPlugin>();
  #booted = false;

  /** Record a plugin to boot. Throws after boot, saying how to fix it. */
  register(descriptor: PluginDescriptor, opts: { source?: string | null; options?: unknown } = {}): void {
    if (this.#booted) {
      throw new Error(`cannot register plugin '${descriptor.name}' after boot; register every plugin before kernel.boot() (external plugins go in SERVICE_PLUGINS).`);
    }
    if (!isPluginDescriptor(descriptor)) throw new Error('register() takes a descriptor built by definePlugin().');
    this.#pending.push({ descriptor, source: opts.source ?? null, options: opts.options });
  }

  get booted(): boolean {
    return this.#booted;
  }

  async boot(): Promise<void> {
    if (this.#booted) return;
    const byName = new Map<string, PendingPlugin>();
    for (const entry of this.#pending) {
      const d = entry.descriptor;
      if (!NAME_RE.test(d.name)) throw new Error(`plugin name '${d.name}' must be lower-case letters, digits, '.', '_', '-', '/' or '@'.`);
      if (byName.has(d.name)) throw new Error(`two plugins are named '${d.name}'; plugin names must be unique.`);
      if (!PLUGIN_KINDS.includes(d.kind)) throw new Error(`plugin '${d.name}' has unknown kind '${d.kind}'; kinds: ${PLUGIN_KINDS.join(', ')}.`);
      if (!semver.valid(d.version)) throw new Error(`plugin '${d.name}' version '${d.version}' is not semver.`);
      if (!semver.validRange(d.kernel) || !semver.satisfies(KERNEL_VERSION, d.kernel)) {
        throw new Error(`plugin '${d.name}' needs kernel ${d.kernel} but this is ${KERNEL_VERSION}; upgrade the plugin or understudy.`);
      }
      byName.set(d.name, entry);
    }
    const order: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (name: string, chain: string[]): void => {
      if (state.get(name) === 'done') return;
      if (state.get(name) === 'visiting') throw new Error(`plugin dependency cycle: ${[...chain, name].join(' -> ')}.`);
      const entry = byName.get(name);
      if (!entry) throw new Error(`plugin '${chain.at(-1)}' depends on '${name}', which is not registered; register it first.`);
      state.set(name, 'visiting');
      for (const dep of entry.descriptor.dependsOn) visit(dep, [...chain, name]);
      state.set(name, 'done');
      order.push(name);
    };
    for (const name of byName.keys()) visit(name, []);

    for (const name of order) {
      const { descriptor, source, options } = byName.get(name)!;
      const resolved = resolvePluginOptions(descriptor, options);
      const deps = new Set(descriptor.dependsOn);
      const instance = await descriptor.setup({
        options: resolved as never,
        get: (depName, kind) => {
          if (!deps.has(depName)) throw new Error(`plugin '${name}' asked for '${depName}' without naming it in dependsOn.`);
          const dep = this.#loaded.get(depName)!;
          if (dep.descriptor.kind !== kind) throw new Error(`plugin '${depName}' is a ${dep.descriptor.kind}, not a ${kind}.`);
          return dep.instance as never;
        },
      });
      checkContract(descriptor, instance);
      this.#loaded.set(name, Object.freeze({ descriptor, source, options: resolved, instance }));
    }
    this.#pending = [];
    this.#booted = true;
  }

  /** Every booted plugin of a kind, in boot order. */
  ofKind<K extends PluginKind>(kind: K): LoadedPlugin<K>[] {
    return [...this.#loaded.values()].filter((p): p is LoadedPlugin<K> => p.descriptor.kind === kind);
  }

  /** A booted plugin by name, or undefined. */
  get(name: string): LoadedPlugin | undefined {
    return this.#loaded.get(name);
  }

  list(): LoadedPlugin[] {
    return [...this.#loaded.values()];
  }
}

function checkContract(descriptor: PluginDescriptor, instance: unknown): void {
  if (typeof instance !== 'object' || instance === null) {
    throw new Error(`plugin '${descriptor.name}': setup() must return an object implementing the ${descriptor.kind} contract.`);
  }
  const missing = CONTRACT_MEMBERS[descriptor.kind].filter((m) => !(m in instance));
  if (missing.length) {
    throw new Error(`plugin '${descriptor.name}': its ${descriptor.kind} is missing ${missing.join(', ')}; see kernel/contracts/${descriptor.kind}.ts.`);
  }
}

/**
 * Imports plugin modules (npm package names, paths or file URLs) and registers every descriptor
 * each default-exports (one, or an array).
 * @public
 */
export async function loadPluginModules(registry: PluginRegistry, specifiers: readonly string[], baseDir: string = process.cwd()): Promise<void> {
  const { pathToFileURL } = await import('node:url');
  const path = await import('node:path');
  for (const spec of specifiers) {
    const isPath = spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('file:');
    const source = spec.startsWith('file:') ? spec : isPath ? pathToFileURL(path.resolve(baseDir, spec)).href : spec;
    let mod: { default?: unknown };
    try {
      mod = (await import(source)) as { default?: unknown };
    } catch (err) {
      throw new Error(`cannot load plugin module '${spec}': ${(err as Error).message}. Install the package or fix the path in SERVICE_PLUGINS.`, { cause: err });
    }
    const exported = Array.isArray(mod.default) ? mod.default : [mod.default];
    if (!exported.length || !exported.every(isPluginDescriptor)) {
      throw new Error(`plugin module '${spec}' must default-export a definePlugin() descriptor or an array of them.`);
    }
    for (const d of exported) registry.register(d, { source });
  }
}
