/** Turns a timestamp column value into ISO-8601 UTC with milliseconds (null stays null). */
export function iso(value: unknown): string {
  return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
}

export function isoOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : iso(value);
}

/** A jsonb column's value: pg and PGlite both hand it back parsed (a JSON string stays a string). */
export function json<T>(value: unknown): T {
  return value as T;
}

/** True when `err` is a unique-constraint violation. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === '23505';
}

/** One page of rows and the total count. */
export interface Page<T> {
  data: T[];
  total: number;
}
