/**
 * The built-in plugins, by module URL. The kernel imports and registers each one at boot
 * through the same path external plugins take, and workers can load them again by URL.
 */
export const BUILTIN_PLUGIN_MODULES: readonly string[] = [
  './signature-parsers/payments/index.js',
  './signature-parsers/github/index.js',
  './signature-parsers/standard/index.js',
  './signature-parsers/generic/index.js',
  './scrubbers/pii/index.js',
  './scrubbers/credentials/index.js',
  './scrubbers/tenant-rules/index.js',
  './extractors/uri-templates/index.js',
  './extractors/patterns/index.js',
  './importers/har/index.js',
  './importers/postman/index.js',
  './importers/openapi/index.js',
].map((rel) => new URL(rel, import.meta.url).href);
