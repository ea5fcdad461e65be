import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { ERRORS } from '../../kernel/errors.js';

it('documents every error_code in docs/errors.md with its status', () => {
  const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  for (const [code, { status }] of Object.entries(ERRORS)) {
    assert.match(doc, new RegExp(`\\| ${status} \\| \`${code}\` \\|`), `${code} (${status}) is missing from docs/errors.md`);
  }
});
