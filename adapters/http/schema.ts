import { Type, type TSchema, type TObject, type Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { AppError } from '../../kernel/errors.js';

/** `limit` (1-500, default 50) and `offset` (default 0), shared by every list. */
export const Pagination = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'Page size.' }),
  offset: Type.Integer({ minimum: 0, default: 0, description: 'Items to skip.' }),
});

/** The canonical list envelope plus `count` for old callers. */
export function ListEnvelope<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
    has_more: Type.Boolean(),
    count: Type.Integer({ description: 'Deprecated: data.length, for callers of the old list shape.' }),
  });
}

/** Shapes a page into the list envelope. */
export function listEnvelope<T>(data: T[], total: number, page: { limit: number; offset: number }) {
  return { data, total, limit: page.limit, offset: page.offset, has_more: page.offset + data.length < total, count: data.length };
}

export const ErrorBodySchema = Type.Object(
  {
    detail: Type.String(),
    error_code: Type.String(),
    feature: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

/** A compiled checker that coerces query strings, applies defaults and reports the first error with its location. */
export class Validator<S extends TSchema> {
  readonly #check: TypeCheck<S>;

  constructor(
    readonly schema: S,
    private readonly where: 'body' | 'query' | 'path',
  ) {
    this.#check = TypeCompiler.Compile(schema);
  }

  parse(input: unknown): Static<S> {
    let value = input;
    if (this.where !== 'body') value = Value.Convert(this.schema, value);
    value = Value.Default(this.schema, value);
    if (this.#check.Check(value)) return value as Static<S>;
    const first = this.#check.Errors(value).First();
    const location = first?.path ? `${this.where}${first.path.replaceAll('/', '.')}` : this.where;
    let message = first?.message ?? 'is invalid';
    if (first && first.schema && (first.schema as { additionalProperties?: unknown }).additionalProperties === false && /additional/i.test(message)) {
      message = 'is not a known field';
    }
    // A path that names nothing valid names nothing at all.
    if (this.where === 'path') throw new AppError('not_found', `${location}: no such resource`);
    throw new AppError('validation_error', `${location}: ${message}`);
  }
}

/** A plain object with no required fields, used when a route takes none. */
export const Empty: TObject = Type.Object({});

/** `{id}` path parameter: an id such as `svc_…`. */
export const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });
