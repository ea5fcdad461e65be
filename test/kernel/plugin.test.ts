import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { createKernel } from '../../kernel/kernel.js';
import { definePlugin, PluginRegistry, loadPluginModules } from '../../kernel/plugin.js';
import { newPseudonymKey } from '../../kernel/scrub/pseudonym.js';
import { BUILTIN_PLUGIN_MODULES } from '../../plugins/index.js';
import { trafficRecord } from '../helpers/traffic.js';

const parser = (name: string, extra: Partial<Parameters<typeof definePlugin>[0]> = {}) =>
  definePlugin({
    name,
    kind: 'signature-parser',
    version: '1.0.0',
    setup: () => ({ kind: 'generic', order: 1, matches: () => false, parse: () => null }),
    ...extra,
  } as Parameters<typeof definePlugin>[0]);

const FIXTURE = new URL('../fixtures/plugins/digits-scrubber.js', import.meta.url);

describe('plugin registry', () => {
  it('boots the built-ins: the four signature parsers, in SPEC order', async () => {
    const kernel = await createKernel({ builtins: BUILTIN_PLUGIN_MODULES });
    try {
      const parsers = kernel.plugins.ofKind('signature-parser').map((p) => p.instance).sort((a, b) => a.order - b.order);
      assert.deepEqual(parsers.map((p) => p.kind), ['payments', 'github', 'standard', 'generic']);
    } finally {
      await kernel.close();
    }
  });

  it('loads an external plugin by path (as SERVICE_PLUGINS names it) and applies option defaults', async () => {
    const kernel = await createKernel({ builtins: [], external: [FIXTURE.pathname] });
    try {
      const plugin = kernel.plugins.get('acme/digits-scrubber')!;
      assert.deepEqual(plugin.options, { replacement: '#' });
      assert.equal(plugin.source, FIXTURE.href);
      const scrubber = kernel.plugins.ofKind('scrubber')[0]!.instance;
      const record = trafficRecord({ uri: '/cards/1', response: { body: { card: '4242 4242' } } });
      const { record: scrubbed, findings } = scrubber.scrub(record, { tenantKey: newPseudonymKey(), rules: { disable: [], keys: {}, patterns: {} } });
      assert.deepEqual(JSON.parse(String(scrubbed.response!.body)), { card: '#### ####' });
      assert.equal(scrubbed.request.uri, '/cards/1', 'only bodies');
      assert.deepEqual(findings, [{ path: 'response.body.card', rule: 'digits' }]);
    } finally {
      await kernel.close();
    }
  });

  it('names the problem and its fix for a module that cannot load', async () => {
    await assert.rejects(loadPluginModules(new PluginRegistry(), ['./no/such/plugin.js']), /cannot load plugin module '\.\/no\/such\/plugin\.js'.*SERVICE_PLUGINS/);
    await assert.rejects(loadPluginModules(new PluginRegistry(), ['node:path']), /must default-export a definePlugin\(\) descriptor/);
  });

  const bootFails = async (plugins: ReturnType<typeof parser>[], pattern: RegExp) => {
    const registry = new PluginRegistry();
    for (const p of plugins) registry.register(p);
    await assert.rejects(registry.boot(), pattern);
  };

  it('refuses duplicate names, bad kinds, bad versions and kernel ranges it does not meet', async () => {
    await bootFails([parser('a'), parser('a')], /two plugins are named 'a'/);
    await bootFails([parser('a', { kind: 'teleporter' as never })], /unknown kind 'teleporter'/);
    await bootFails([parser('a', { version: 'one' })], /not semver/);
    await bootFails([parser('a', { kernel: '^2.0.0' })], /needs kernel \^2\.0\.0/);
    await bootFails([parser('Bad Name')], /must be lower-case/);
  });

  it('orders setup by dependsOn and refuses missing deps and cycles', async () => {
    const order: string[] = [];
    const track = (name: string, dependsOn: string[] = []) =>
      parser(name, {
        dependsOn,
        setup: (ctx: { get: (n: string, k: 'signature-parser') => unknown }) => {
          for (const d of dependsOn) assert.ok(ctx.get(d, 'signature-parser'));
          order.push(name);
          return { kind: 'generic', order: 1, matches: () => false, parse: () => null };
        },
      } as never);
    const registry = new PluginRegistry();
    registry.register(track('c', ['b']));
    registry.register(track('b', ['a']));
    registry.register(track('a'));
    await registry.boot();
    assert.deepEqual(order, ['a', 'b', 'c']);
    await bootFails([parser('x', { dependsOn: ['y'] })], /depends on 'y', which is not registered/);
    await bootFails([parser('x', { dependsOn: ['y'] }), parser('y', { dependsOn: ['x'] })], /dependency cycle/);
  });

  it('validates options against the schema', async () => {
    const registry = new PluginRegistry();
    registry.register(parser('opt', { options: Type.Object({ n: Type.Integer({ minimum: 1 }) }) }), { options: { n: 0 } });
    await assert.rejects(registry.boot(), /opt/);
  });

  it('checks the contract of what setup returns', async () => {
    await bootFails([parser('half', { setup: () => ({ kind: 'generic', order: 1 }) } as never)], /missing matches, parse/);
  });

  it('refuses registration after boot, saying how to fix it', async () => {
    const registry = new PluginRegistry();
    await registry.boot();
    assert.throws(() => registry.register(parser('late')), /after boot.*SERVICE_PLUGINS/);
  });
});
