import type { Knex } from 'knex';
import * as m001 from './001-platform.js';
import * as m002 from './002-agent.js';
import * as m003 from './003-library.js';
import * as m004 from './004-replay-and-paging.js';
import * as m005 from './005-transition.js';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration in order. Adding one: write NNN-name.ts and list it here. */
const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['001-platform', m001],
  ['002-agent', m002],
  ['003-library', m003],
  ['004-replay-and-paging', m004],
  ['005-transition', m005],
];

/** A knex migration source over the list above, so migrations need no directory scan. */
export const migrationSource: Knex.MigrationSource<readonly [string, Migration]> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: (m) => m[0],
  getMigration: async (m) => m[1],
};
