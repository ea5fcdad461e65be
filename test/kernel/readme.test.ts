import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { ENV_VARS, TENANT_SETTINGS } from '../../kernel/config.js';

it('the README lists every environment variable and tenant setting', () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  for (const v of ENV_VARS) assert.ok(readme.includes(`| \`${v.name}\` |`), `${v.name} is missing from the README table`);
  for (const key of Object.keys(TENANT_SETTINGS)) assert.ok(readme.includes(`\`${key}\``), `${key} is missing from the README`);
});
