import type { TrafficRecord } from '../domain/index.js';
import type { ScrubRules } from '../scrub/rules.js';
import { UNSCRUBBABLE, walkRecord, type ScrubVisitor } from '../scrub/walk.js';

/**
 * The rule of a finding that says a body was not (wholly) scrubbed: compressed past its bound or
 * with a coding we do not know, bytes under a content type that is not text (images,
 * octet-stream, protobuf), or JSON nested too deep to walk (scrubbed as plain text only). Path
 * `request.body` or `response.body`. Such a body is kept as it was recorded, so whatever is
 * promoted from a record carrying this finding must not claim `scrubbed: true`.
 */
export { UNSCRUBBABLE };

/** One finding a scrubber made: where, and which rule. Never the value. */
export interface ScrubFinding {
  path: string;
  rule: string;
}

/** A rule a scrubber applies, as `GET /v1/scrub/config` lists it; its name is what `disable` takes. */
export interface ScrubRuleInfo {
  name: string;
  category: 'pii' | 'credential' | 'custom';
  description: string;
}

/**
 * What a scrub run knows besides the records: plain data, cloned into worker threads.
 * `tenantKey` keys the pseudonyms (see Pseudonymizer); it is a secret: never log, return or
 * store it anywhere else.
 */
export interface ScrubContext {
  tenantKey: string;
  /** The service's rules (`*` merged with its own). */
  rules: ScrubRules;
}

/** A traffic record on its way through a transition: scrubbed, with every scrubber's findings so far. */
export interface ScrubbedRecord extends TrafficRecord {
  scrub_findings?: ScrubFinding[];
}

/**
 * Kind `scrubber`: replaces PII or credentials in traffic records. A scrubber says what to do
 * with one value where it sits (`visitor`); the kernel walks the records (walkRecord). Pure and
 * deterministic: the same record and context give the same result, in this thread or a worker.
 * Build it with `defineScrubber`.
 */
export interface Scrubber {
  /** The rules it applies. */
  readonly rules: readonly ScrubRuleInfo[];
  /** The value visitor for one run (made once per batch: set up keys and compiled rules here). */
  visitor(ctx: ScrubContext): ScrubVisitor;
  scrub(record: TrafficRecord, ctx: ScrubContext): { record: TrafficRecord; findings: ScrubFinding[] };
  /** Worker-stage entry: each record scrubbed, its findings appended to `scrub_findings`. */
  scrubBatch(records: readonly ScrubbedRecord[], ctx: ScrubContext): ScrubbedRecord[];
}

/**
 * Scrubs a batch with several scrubbers in one walk of each record: at every value each
 * visitor in turn sees what the one before left. The same result as running them one by one,
 * for the cost of one walk.
 */
export function scrubWithAll(scrubbers: readonly Pick<Scrubber, 'visitor'>[], records: readonly ScrubbedRecord[], ctx: ScrubContext): ScrubbedRecord[] {
  const visitors = scrubbers.map((s) => s.visitor(ctx));
  const visit: ScrubVisitor = visitors.length === 1 ? visitors[0]! : (value, site, found) => visitors.reduce((v, next) => next(v, site, found), value);
  return records.map((r) => {
    const { record, findings } = walkRecord(r, ctx, visit);
    if (!findings.length) return record;
    const before = r.scrub_findings ?? [];
    // Each walk of a chain flags an unreadable body again; one finding says it.
    const added = before.some((f) => f.rule === UNSCRUBBABLE) ? findings.filter((f) => f.rule !== UNSCRUBBABLE || !before.some((b) => b.rule === UNSCRUBBABLE && b.path === f.path)) : findings;
    return added.length ? { ...record, scrub_findings: [...before, ...added] } : record;
  });
}

/** A scrubber's contract from its rules and visitor; adds `scrub` and `scrubBatch`. */
export function defineScrubber(impl: Pick<Scrubber, 'rules' | 'visitor'>): Scrubber {
  const self: Scrubber = {
    rules: impl.rules,
    visitor: impl.visitor,
    scrub: (record, ctx) => walkRecord(record, ctx, impl.visitor(ctx)),
    scrubBatch: (records, ctx) => scrubWithAll([self], records, ctx),
  };
  return self;
}
