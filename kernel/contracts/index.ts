import type { DriftDetector } from './drift-detector.js';
import type { Extractor } from './extractor.js';
import type { Importer } from './importer.js';
import type { Scrubber } from './scrubber.js';
import type { SignatureParser } from './signature-parser.js';
import type { StatechartEngine } from './statechart-engine.js';

/** Each plugin kind and the contract its `setup` must return. */
export interface PluginContracts {
  importer: Importer;
  scrubber: Scrubber;
  extractor: Extractor;
  'drift-detector': DriftDetector;
  'statechart-engine': StatechartEngine;
  'signature-parser': SignatureParser;
}

export type PluginKind = keyof PluginContracts;

/** The members each kind's contract must have, checked at boot so a bad plugin fails early. */
export const CONTRACT_MEMBERS: { readonly [K in PluginKind]: readonly string[] } = {
  importer: ['format', 'mediaTypes', 'binding', 'captured', 'read'],
  scrubber: ['rules', 'visitor', 'scrub', 'scrubBatch'],
  extractor: ['produces', 'extract'],
  'drift-detector': ['compare'],
  'statechart-engine': ['validate', 'next'],
  'signature-parser': ['kind', 'order', 'matches', 'parse'],
};

export const PLUGIN_KINDS = Object.keys(CONTRACT_MEMBERS) as PluginKind[];

export type * from './drift-detector.js';
export type * from './extractor.js';
export type * from './importer.js';
export type * from './scrubber.js';
export type * from './signature-parser.js';
export type * from './statechart-engine.js';
