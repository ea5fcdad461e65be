/** Names of what the container holds; use these instead of string literals. @public */
export const KEYS = {
  config: 'config',
  logger: 'logger',
  licence: 'licence',
  store: 'store',
  changes: 'changes',
  plugins: 'plugins',
  pool: 'pool',
  pipelines: 'pipelines',
  tenant: 'tenant',
  requestId: 'requestId',
} as const;
