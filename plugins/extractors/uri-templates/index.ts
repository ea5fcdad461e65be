import { definePlugin, type ExchangeRecord, type TemplateExtractor } from '../../../kernel/public.js';
import { responseKeys } from './body-keys.js';
import { inferTemplates, type PathSample } from './infer.js';
import { pathSegments, segmentShape, type SegmentShape } from './shapes.js';

const NAME = 'extractor/uri-templates';

/** What one exchange contributes, computed in the worker pool: its segments' id shapes and its response body's key paths. */
interface Features {
  shapes: (SegmentShape | null)[];
  body: string[] | null;
}

const featuresOf = (record: ExchangeRecord): Features => ({ shapes: pathSegments(record.request.uri).map(segmentShape), body: responseKeys(record) });

function sampleOf(record: ExchangeRecord): PathSample {
  const { shapes, body } = (record.features?.[NAME] as Features | undefined) ?? featuresOf(record);
  return { segments: pathSegments(record.request.uri), shapes, method: record.request.method, status: record.response?.status, body };
}

/**
 * URI templates from recorded paths: `/v1/customers/cus_9s8d7f` → `/v1/customers/{customer_id}`.
 * Ids are told by their shape (per record, in the worker pool) and by cardinality across all
 * the traffic of a service (in `extract`), a parameter with a few values by its subtrees
 * answering alike (response key paths, per record in the pool); parameter names come from the
 * collection before them.
 */
export default definePlugin({
  name: NAME,
  kind: 'extractor',
  version: '1.1.0',
  pure: true,
  setup: (): TemplateExtractor => ({
    produces: 'uri_template',
    normalizeBatch: (records) => records.map((r) => ({ ...r, features: { ...r.features, [NAME]: featuresOf(r) } })),
    extract: (records) => inferTemplates(records.map(sampleOf)),
  }),
});
