/**
 * `npm run bench`: every benchmark, each beside its baseline in the same run; the figures are
 * written into docs/benchmarks.md. BENCH_ROUNDS (default 5) and BENCH_DURATION (seconds per
 * run, default 8) trade time for steadier medians; BENCH_ONLY=platform|agent|library|transition runs one part (platform includes start-up).
 */
import { agentSection } from './agent.js';
import { pinSelf, writeSection } from './lib.js';
import { librarySection } from './library.js';
import { platformSection, startupSection } from './platform.js';
import { transitionSection } from './transition.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = Number(process.env.BENCH_DURATION ?? 8);
const only = process.env.BENCH_ONLY;

pinSelf();
if (!only || only === 'platform') {
  writeSection('startup', await startupSection(3));
  writeSection('platform', await platformSection(rounds, seconds));
}
if (!only || only === 'agent') writeSection('agent', await agentSection(rounds, seconds));
if (!only || only === 'library') writeSection('library', await librarySection());
if (!only || only === 'transition') writeSection('transition', await transitionSection(rounds));
process.exit(0);
