import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkedTenantConfig, loadProcessConfig, mergeTenantConfig, validateTenantSetting } from '../../kernel/config.js';
import { generateLicenceKeyPair, issueLicence, verifyLicence } from '../../kernel/license.js';

describe('config', () => {
  it('has defaults, reads the environment, and says which variable is wrong', () => {
    const d = loadProcessConfig({});
    assert.deepEqual([d.host, d.port, d.agentPort, d.databaseUrl, d.agentUrl], ['127.0.0.1', 8000, 8080, undefined, 'http://127.0.0.1:8080']);
    const c = loadProcessConfig({ PORT: '9000', SERVICE_PLUGINS: ' a, ./b ', SERVICE_RATE_LIMITS: 'global=5,eval_run=2', HOST: '0.0.0.0', AGENT_PORT: '9090' });
    assert.deepEqual([c.port, c.plugins, c.rateLimits, c.agentUrl], [9000, ['a', './b'], { global: 5, eval_run: 2 }, 'http://127.0.0.1:9090']);
    assert.throws(() => loadProcessConfig({ PORT: 'eighty' }), /PORT=eighty/);
    assert.throws(() => loadProcessConfig({ SERVICE_RATE_LIMITS: 'global' }), /SERVICE_RATE_LIMITS/);
  });

  it('merges tenant overrides over defaults and validates each', () => {
    assert.equal(mergeTenantConfig({ mock_latency_ms: 20 }).mock_latency_ms, 20);
    assert.equal(mergeTenantConfig({}).require_scrubbing, false);
    assert.equal(validateTenantSetting('mock_latency_ms', 10), 10);
    assert.throws(() => validateTenantSetting('mock_latency_ms', '10'), /mock_latency_ms/);
    assert.throws(() => validateTenantSetting('nope', 1), /unknown config key 'nope'/);
  });

  it('checks stored overrides again as it reads them: what is no longer valid is left out, and said where, never what', () => {
    const stored = {
      mock_latency_ms: 'slow',
      require_scrubbing: true,
      scrub_rules: {
        '*': { disable: 'email', keys: { ssn_like: 'redact', 'secret-x': 'shred' }, patterns: { order_id: 'ord_[0-9]{6}', old: '(?=SECRETPATTERN)x', wide: '\\w{2,1000}\\d', Bad: 'x' } },
        svc_1: { keys: { internal: 'keep' }, extra: 1 },
        'not a service id': { keys: { a: 'redact' } },
        svc_2: 'none',
      },
    };
    const { config, problems } = checkedTenantConfig(stored);
    assert.equal(config.mock_latency_ms, 0, 'an invalid value gives way to the default');
    assert.equal(config.require_scrubbing, true);
    assert.deepEqual(config.scrub_rules, { '*': { keys: { ssn_like: 'redact' }, patterns: { order_id: 'ord_[0-9]{6}' } }, svc_1: { keys: { internal: 'keep' } } });
    assert.deepEqual(problems, [
      'mock_latency_ms: the stored value is not valid; the default is used',
      'scrub_rules: *.disable: not a list of rule names; ignored (every rule applies)',
      'scrub_rules: *.keys: 1 entry not a key name → pseudonymize | redact | keep, ignored',
      'scrub_rules: *.patterns.old: no longer a pattern the service runs (RE2 syntax, a program of at most 100 instructions, not matching the empty string); ignored',
      'scrub_rules: *.patterns.wide: no longer a pattern the service runs (RE2 syntax, a program of at most 100 instructions, not matching the empty string); ignored',
      'scrub_rules: *.patterns: a pattern whose name is not a rule name is ignored',
      'scrub_rules: svc_1: an unknown field is ignored',
      'scrub_rules: a layer whose key is not a service id or * is ignored',
      'scrub_rules: svc_2: not an object of rules; ignored',
    ]);
    assert.ok(!problems.join().includes('SECRETPATTERN') && !problems.join().includes('shred') && !problems.join().includes('slow'));
    assert.deepEqual(checkedTenantConfig({ scrub_rules: [1] }).config.scrub_rules, {});
    assert.deepEqual(mergeTenantConfig({ scrub_rules: stored.scrub_rules }).scrub_rules, config.scrub_rules);
    assert.deepEqual(checkedTenantConfig({ scrub_rules: { '*': { patterns: { a: 'b' } } } }).problems, []);
  });

  it('refuses a scrub pattern RE2 cannot run, or one too costly, when it is written', () => {
    assert.throws(() => validateTenantSetting('scrub_rules', { '*': { patterns: { look: '(?=a)b' } } }), /patterns\.look: not a regular expression the service runs \(RE2 syntax/);
    assert.throws(() => validateTenantSetting('scrub_rules', { '*': { patterns: { wide: '[a-z]{500}' } } }), /patterns\.wide: too costly/);
  });
});

describe('licence', () => {
  it('round-trips a signed licence and refuses tampering, wrong keys and expiry', () => {
    const pair = generateLicenceKeyPair();
    const token = issueLicence({ tenant: 'acme', tier: 'pro', exp: Math.floor(Date.now() / 1000) + 60 }, pair.privateKey);
    assert.equal(verifyLicence(token, pair.publicKey).tier, 'pro');
    const [payload, sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ tenant: 'acme', tier: 'enterprise' })).toString('base64url');
    assert.throws(() => verifyLicence(`${forged}.${sig}`, pair.publicKey), /does not verify/);
    assert.throws(() => verifyLicence(token, generateLicenceKeyPair().publicKey), /does not verify/);
    assert.throws(() => verifyLicence(`${payload}`, pair.publicKey), /not a licence token/);
    const expired = issueLicence({ tenant: 'acme', tier: 'pro', exp: 1 }, pair.privateKey);
    assert.throws(() => verifyLicence(expired, pair.publicKey), /expired/);
  });
});
