import { readFileSync } from 'node:fs';
import type { Importer, ImportSkip, MockDraft } from '../../kernel/public.js';
import { createKernel } from '../../kernel/kernel.js';
import { BUILTIN_PLUGIN_MODULES } from '../../plugins/index.js';

/** A test fixture's bytes. */
export const fixture = (p: string): Buffer => readFileSync(new URL(`../../../test/fixtures/${p}`, import.meta.url));

/** The external importer plugin of test/fixtures, as SERVICE_PLUGINS loads it. */
export const WIREMOCK_PLUGIN = new URL('../fixtures/plugins/wiremock-importer.js', import.meta.url).pathname;

/** Every importer the kernel boots: the built-ins and the external fixture plugin. */
export async function bootImporters(): Promise<{ importers: Map<string, Importer>; close: () => Promise<void> }> {
  const kernel = await createKernel({ builtins: BUILTIN_PLUGIN_MODULES, external: [WIREMOCK_PLUGIN] });
  return { importers: new Map(kernel.plugins.ofKind('importer').map((p) => [p.instance.format, p.instance])), close: () => kernel.close() };
}

/** Splits bytes into chunks of `size` (the whole when omitted), as a stream would deliver them. */
export async function* chunked(bytes: Buffer, size = bytes.length || 1): AsyncIterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** Runs an importer over a document to the end. */
export async function readAll(importer: Importer, doc: Buffer | string, mediaType = 'application/json', chunk?: number) {
  const drafts: MockDraft[] = [];
  const skipped: ImportSkip[] = [];
  const warnings: string[] = [];
  const ctx = { mediaType, signal: new AbortController().signal, skip: (where: string, why: string) => skipped.push({ where, why }), warn: (t: string) => warnings.push(t) };
  for await (const d of importer.read(chunked(Buffer.from(doc), chunk), ctx)) drafts.push(d);
  return { drafts, skipped, warnings };
}
