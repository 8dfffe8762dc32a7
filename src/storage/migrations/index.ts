import type { Kysely, Migration, MigrationProvider } from 'kysely';
import type { Dialect } from '../dialect.js';
import * as m0001 from './0001_initial.js';

type Step = { up(db: Kysely<unknown>, dialect: Dialect): Promise<void> };

/** Numbered, applied in name order. Add a file and a line here; never edit an applied one. */
const STEPS: Record<string, Step> = {
  '0001_initial': m0001,
};

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      const out: Record<string, Migration> = {};
      for (const [name, step] of Object.entries(STEPS)) out[name] = { up: (db) => step.up(db, dialect) };
      return out;
    },
  };
}
