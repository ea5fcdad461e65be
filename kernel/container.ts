import { asValue, createContainer as createAwilix, InjectionMode, type AwilixContainer } from 'awilix';

/**
 * The container everything is wired in: PROXY injection (a factory receives the cradle and takes
 * what it names) and strict mode (a singleton cannot depend on something shorter-lived).
 * @public
 */
export function createContainer<C extends object>(): AwilixContainer<C> {
  return createAwilix<C>({ injectionMode: InjectionMode.PROXY, strict: true });
}

/** A child scope for one request or one plugin, holding the values given. @public */
export function createScope<C extends object>(parent: AwilixContainer<C>, values: Partial<C>): AwilixContainer<C> {
  const scope = parent.createScope<C>();
  for (const [name, value] of Object.entries(values)) scope.register(name, asValue(value));
  return scope;
}
