/**
 * The one import surface for plugins and pipelines: types and define* helpers.
 * @public
 */
export { definePlugin, KERNEL_VERSION, type PluginDescriptor, type PluginSetupContext } from './plugin.js';
export { definePipeline, type PipelineSpec, type StageSpec, type StageContext, type PipelineMessage, type PluginCall } from './pipeline.js';
export { defineScrubber } from './contracts/scrubber.js';
export { Pseudonymizer, luhnValid, luhnCheckDigit, ibanValid } from './scrub/pseudonym.js';
export { UNSCRUBBABLE, walkRecord, type ScrubSite, type ScrubVisitor } from './scrub/walk.js';
export type { ScrubRules } from './scrub/rules.js';
export { compileTenantPattern, type TenantPattern } from './scrub/tenant-pattern.js';
export { AppError, type ErrorCode } from './errors.js';
export type * from './contracts/index.js';
export type * from './domain/index.js';
export { headerValue } from './domain/index.js';
export * from './import-kit.js';
