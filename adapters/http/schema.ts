import { Type, type TSchema, type TObject, type Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value, ValueErrorType } from '@sinclair/typebox/value';
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

const NUMBER_RE = /^-?\d+(\.\d+)?$/;

/**
 * Query and path values arrive as strings; turn the ones the schema wants as numbers or booleans
 * into those, strictly (`1.5` stays 1.5 and fails an integer check; `abc` stays a string).
 */
function coerceStrings(schema: TSchema, input: unknown): unknown {
  const props = (schema as TObject).properties;
  if (!props || typeof input !== 'object' || input === null) return input;
  const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [name, raw] of Object.entries(out)) {
    const type = (props[name] as { type?: string } | undefined)?.type;
    if (typeof raw !== 'string') continue;
    if ((type === 'integer' || type === 'number') && NUMBER_RE.test(raw)) out[name] = Number(raw);
    else if (type === 'boolean' && (raw === 'true' || raw === 'false')) out[name] = raw === 'true';
  }
  return out;
}

function flatDefaults(schema: TSchema, input: unknown): unknown {
  const props = (schema as TObject).properties;
  if (!props || typeof input !== 'object' || input === null) return input;
  const out = input as Record<string, unknown>;
  for (const [name, prop] of Object.entries(props)) if (out[name] === undefined && prop.default !== undefined) out[name] = prop.default;
  return out;
}

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
    // Query and path objects are flat: coerce and fill top-level defaults by hand (hot path);
    // bodies may nest, so TypeBox walks them.
    const value = this.where === 'body' ? Value.Default(this.schema, input) : flatDefaults(this.schema, coerceStrings(this.schema, input));
    if (this.#check.Check(value)) return value as Static<S>;
    const first = this.#check.Errors(value).First();
    const location = first?.path ? `${this.where}${first.path.replaceAll('/', '.')}` : this.where;
    const message = first?.type === ValueErrorType.ObjectAdditionalProperties ? 'is not a known field' : (first?.message ?? 'is invalid');
    // A path that names nothing valid names nothing at all.
    if (this.where === 'path') throw new AppError('not_found', `${location}: no such resource`);
    throw new AppError('validation_error', `${location}: ${message}`);
  }
}

/** An id such as `svc_…`, in a path, query or body. */
export const Id = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });

/** `{id}` path parameter. */
export const IdParam = Type.Object({ id: Id });
