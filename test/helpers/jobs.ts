import type { Harness } from './harness.js';

/** Polls a transition job until it ends (succeeded, failed or cancelled); answers its last status. */
export async function waitForJobEnd(h: Harness, jobId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 600; i++) {
    const job = (await h.call('GET', `/v1/transition/${jobId}/status`)).body;
    if (['succeeded', 'failed', 'cancelled'].includes(String(job.status))) return job;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`job ${jobId} did not end`);
}
