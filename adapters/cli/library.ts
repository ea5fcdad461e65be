import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { Option, type Command } from 'commander';
import { isAppError } from '../../kernel/errors.js';
import { assertExportAllowed, EXPORT_FORMATS, exportLibrary, type ExportFormat } from '../../pipelines/library-export.js';
import { runSeed } from '../../pipelines/seed.js';
import { createRuntime } from '../runtime.js';
import { PACKAGE_VERSION } from '../version.js';
import { progressBar } from './progress.js';

/** A file's media type by its extension: YAML for .yaml/.yml, else JSON. */
function mediaTypeOf(file: string): string {
  return /\.ya?ml$/i.test(file) ? 'application/yaml' : 'application/json';
}

/** Turns an AppError into the message the command prints (no stack for bad input). */
function explained(err: unknown): Error {
  return isAppError(err) ? new Error(`${err.code}: ${err.message}`) : (err as Error);
}

/**
 * `understudy import FORMAT FILE` and `understudy export --out FILE`: the seed and export
 * pipelines the API runs, against the configured database, with no server. On PGlite, stop
 * `understudy serve` first: the embedded database belongs to one process at a time.
 */
export function registerLibraryCommands(program: Command): void {
  program
    .command('import')
    .description('Import a document into the mock library (har, postman, openapi, or a plugin\'s format); prints the report as JSON')
    .argument('<format>', 'har, postman, openapi, or the format of an importer plugin in SERVICE_PLUGINS')
    .argument('<file>', 'the document (.json, or .yaml/.yml for postman and openapi)')
    .option('--service <id>', 'the service the entries belong to (required except for har, where hosts pick the service)')
    .option('--scrub', 'scrub the entries before writing them (the default for captured traffic: har, postman)')
    .option('--no-scrub', 'store captured entries as they are, marked unscrubbed')
    .action(async (format: string, file: string, opts: { service?: string; scrub?: boolean }) => {
      const size = statSync(file).size;
      const runtime = await createRuntime();
      const bar = progressBar(`import ${format}`);
      try {
        const { cradle } = runtime;
        const report = await runSeed(
          { tenant: cradle.tenant, kernel: cradle.kernel, store: cradle.store, mocks: cradle.mocks, tenantConfig: cradle.tenantConfig, tenantSecrets: cradle.tenantSecrets, services: await cradle.services.all(cradle.tenant) },
          { format, mediaType: mediaTypeOf(file), source: createReadStream(file, { highWaterMark: 1 << 20 }), serviceId: opts.service, scrub: opts.scrub, size, onProgress: (f) => bar.update(f, format) },
        );
        bar.stop();
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        const found = Object.values(report.findings).reduce((a, b) => a + b, 0);
        const scrubbed = report.scrubbed ? `scrubbed (${found} findings)` : 'not scrubbed';
        process.stderr.write(`imported ${file}: ${report.created} created, ${report.updated} updated, ${report.duplicates} duplicates collapsed, ${report.skipped_total} skipped; ${scrubbed}\n`);
      } catch (err) {
        bar.stop();
        throw explained(err);
      } finally {
        await runtime.close();
      }
    });
  program
    .command('export')
    .description('Write the mock library to a file')
    .requiredOption('--out <file>', 'where to write it')
    .addOption(new Option('--format <format>', 'native, har or wiremock').choices(EXPORT_FORMATS).default('native'))
    .option('--all', 'include unscrubbed entries (refused when the tenant requires scrubbing)')
    .option('--service <id>', 'only this service\'s entries')
    .action(async (opts: { out: string; format: ExportFormat; all?: boolean; service?: string }) => {
      const runtime = await createRuntime();
      try {
        const { cradle } = runtime;
        assertExportAllowed(!opts.all, await cradle.tenantConfig.overrides(cradle.tenant));
        const text = exportLibrary(
          { tenant: cradle.tenant, mocks: cradle.mocks, services: await cradle.services.all(cradle.tenant), version: PACKAGE_VERSION },
          { format: opts.format, scrubbedOnly: !opts.all, serviceId: opts.service },
        );
        await pipeline(Readable.from(text), createWriteStream(opts.out));
        process.stderr.write(`wrote ${opts.out} (${opts.format})\n`);
      } catch (err) {
        throw explained(err);
      } finally {
        await runtime.close();
      }
    });
}
