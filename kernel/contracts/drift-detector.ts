/** One difference between what the library expects and what the upstream answered. */
export interface DriftFinding {
  path: string;
  change: string;
  severity: 'major' | 'minor';
}

/** Kind `drift-detector`: compares an expected schema with a live answer. */
export interface DriftDetector {
  compare(expected: Record<string, unknown>, actual: unknown): DriftFinding[];
}
