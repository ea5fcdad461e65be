/**
 * The one import surface for plugins and pipelines: types and define* helpers.
 * @public
 */
export { definePlugin, KERNEL_VERSION, type PluginDescriptor, type PluginSetupContext } from './plugin.js';
export { definePipeline, type PipelineSpec, type StageSpec, type StageContext, type PipelineMessage } from './pipeline.js';
export { AppError, type ErrorCode } from './errors.js';
export type * from './contracts/index.js';
export type * from './domain/index.js';
