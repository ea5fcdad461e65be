import { createRequire } from 'node:module';

/** Understudy's version, from package.json. @public */
export const PACKAGE_VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
