import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadProcessConfig, mergeTenantConfig, validateTenantSetting } from '../../kernel/config.js';
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
