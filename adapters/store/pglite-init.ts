/**
 * Creates a PGlite data directory, then exits. Store.open runs it in a child process for a new
 * directory: initdb inside the serving process would leave it holding ~450 MB it never returns.
 * Usage: node pglite-init.js DIR
 */
import { PGlite } from '@electric-sql/pglite';

const db = new PGlite(process.argv[2]);
await db.waitReady;
await db.close();
