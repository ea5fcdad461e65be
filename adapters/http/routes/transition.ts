import { Type } from '@sinclair/typebox';
import { AppError } from '../../../kernel/errors.js';
import { TRANSITION_STAGES } from '../../../pipelines/transition.js';
import { JOB_STATUSES } from '../../store/repositories/transition-jobs.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { Id, ListEnvelope, listEnvelope } from '../schema.js';

const JobParam = Type.Object({ job_id: Id });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const JobSchema = Type.Object({
  job_id: Type.String({ description: '`job_` + 20 base62 characters.' }),
  service_id: Type.String(),
  status: Type.Union(JOB_STATUSES.map((s) => Type.Literal(s))),
  progress: Type.Number({ minimum: 0, maximum: 1 }),
  current_stage: Nullable(Type.Union(TRANSITION_STAGES.map((s) => Type.Literal(s)))),
  records_processed: Type.Integer(),
  records_total: Type.Integer(),
  error: Nullable(Type.String({ description: 'Why it failed or was cancelled; never quotes recorded data.' })),
  result: Nullable(
    Type.Object(
      {
        entries_created: Type.Integer(),
        entries_updated: Type.Integer(),
        entries_deleted: Type.Optional(
          Type.Object(
            { superseded: Type.Integer({ description: 'Recorded answers to a request now recorded with another status.' }), of_deleted_services: Type.Integer({ description: 'Entries of services deleted since.' }) },
            { description: 'Entries the transition deleted (absent on jobs from before it deleted any).' },
          ),
        ),
        endpoints: Type.Integer(),
        templated_endpoints: Type.Integer(),
        records_used: Type.Integer(),
        records_skipped: Type.Object({ no_response: Type.Integer(), truncated: Type.Integer() }),
        findings: Type.Record(Type.String(), Type.Integer(), { description: 'Values scrubbed, per rule.' }),
        warnings: Type.Array(Type.String()),
      },
      { description: 'What a succeeded job did.' },
    ),
  ),
  attempts: Type.Integer({ description: 'Runs begun and not handed back; a runner that stopped mid-job leaves the job to run again from scratch, one that shut down gracefully hands it back uncounted.' }),
  cancel_requested: Type.Boolean(),
  created_at: Type.String(),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
  updated_at: Type.String(),
});

const PatternsSchema = Type.Object({
  service_id: Type.String(),
  method: Type.String(),
  uri_template: Type.String({ description: 'e.g. /v1/customers/{customer_id}' }),
  samples: Type.Integer(),
  query: Type.Record(
    Type.String(),
    Type.Object({ required: Type.Boolean(), type: Type.String(), distinct: Type.Integer(), volatile: Type.Boolean(), values: Type.Optional(Type.Array(Type.String())) }),
  ),
  request_schema: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the JSON request bodies.' })),
  response_schemas: Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()), { description: 'JSON Schema of the JSON response bodies, by status.' }),
});

/** `POST /v1/transition/start`, the job reads, cancel, and `POST /v1/traffic/normalize`. */
export const transitionRoutes: RouteSpec[] = [
  defineRoute({
    method: 'POST',
    path: '/v1/transition/start',
    summary: 'Start a LEARN to MOCK transition of a service: scrub, normalize, extract, promote into the library',
    tag: 'transition',
    rateLimit: 'transition_start',
    idempotent: true,
    body: Type.Object({ service_id: Id }, { additionalProperties: false }),
    responses: {
      202: { description: 'Queued; the mode is TRANSITIONING until the job ends (MOCK on success, LEARN otherwise)', schema: Type.Object({ job_id: Type.String(), status: Type.Literal('queued') }) },
      409: { description: '`invalid_state`: the mode is not LEARN' },
      503: { description: '`transitioning`: a transition is already running' },
    },
    async handler({ cradle, tenant, body }) {
      await cradle.services.get(tenant, body.service_id);
      const job = await cradle.transitionJobs.start(tenant, body.service_id);
      cradle.transitions.notify();
      return { status: 202, body: { job_id: job.job_id, status: 'queued' }, headers: { Location: `/v1/transition/${job.job_id}/status` }, activity: { job_id: job.job_id, service_id: body.service_id } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/transition/jobs',
    summary: 'Recent transition jobs, newest first (at most 20)',
    tag: 'transition',
    query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 20, default: 20 }), offset: Type.Integer({ minimum: 0, maximum: 19, default: 0 }) }),
    responses: { 200: { description: 'A page of jobs', schema: ListEnvelope(JobSchema) } },
    async handler({ cradle, tenant, query }) {
      const limit = Math.min(query.limit, 20 - query.offset);
      const page = await cradle.transitionJobs.page(tenant, limit, query.offset);
      return { body: listEnvelope(page.data, Math.min(page.total, 20), { limit, offset: query.offset }) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/transition/{job_id}/status',
    summary: 'One transition job: status, progress (0..1), current stage, records processed and total',
    tag: 'transition',
    params: JobParam,
    responses: { 200: { description: 'The job', schema: JobSchema } },
    async handler({ cradle, tenant, params }) {
      const job = await cradle.transitionJobs.get(tenant, params.job_id);
      if (!job) throw new AppError('not_found', `transition job ${params.job_id} does not exist`);
      return { body: job };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/transition/{job_id}/cancel',
    summary: 'Cancel a transition: a queued job at once, a running one at its next heartbeat (the mode returns to LEARN)',
    tag: 'transition',
    params: JobParam,
    allowWhileTransitioning: true,
    responses: { 202: { description: 'Cancelled, or asked to stop', schema: JobSchema }, 409: { description: '`invalid_state`: the job has already ended' } },
    async handler({ cradle, tenant, params }) {
      const job = await cradle.transitionJobs.cancel(tenant, params.job_id);
      if (!job) throw new AppError('not_found', `transition job ${params.job_id} does not exist`);
      return { status: 202, body: job, activity: { job_id: job.job_id } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/traffic/normalize',
    summary: 'Scrub and normalize recorded traffic, extract URI templates and patterns (query parameters, JSON Schemas) per endpoint, and store the patterns',
    tag: 'traffic',
    rateLimit: 'normalize',
    body: Type.Object({ service_id: Type.Optional(Id) }, { additionalProperties: false }),
    responses: {
      200: {
        description: 'Every endpoint found, per service (all services when none is named)',
        schema: Type.Object({ data: Type.Array(PatternsSchema), total: Type.Integer(), records: Type.Integer({ description: 'Traffic records read.' }) }),
      },
    },
    async handler({ cradle, tenant, body }) {
      const ids = body.service_id ? [(await cradle.services.get(tenant, body.service_id)).id] : (await cradle.services.all(tenant)).map((s) => s.id);
      const data: unknown[] = [];
      let records = 0;
      for (const id of ids) {
        const found = await cradle.transitions.normalize(id);
        records += found.records;
        for (const e of found.endpoints) data.push({ service_id: id, ...e });
      }
      return { body: { data, total: data.length, records }, activity: { services: ids.length, endpoints: data.length } };
    },
  }),
];
