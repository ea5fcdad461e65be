import { Presets, SingleBar } from 'cli-progress';

/** What offline commands report progress through. @public */
export interface Progress {
  /** `fraction` 0..1; `stage` names what runs now. */
  update(fraction: number, stage?: string): void;
  stop(): void;
}

/**
 * A progress bar on stderr when stderr is a terminal; silent otherwise (pipes and CI logs get
 * only the final summary the command prints).
 * @public
 */
export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new SingleBar({ stream, format: `${label} [{bar}] {percentage}% {stage}`, hideCursor: true, clearOnComplete: false, etaBuffer: 20 }, Presets.shades_classic);
  bar.start(1000, 0, { stage: '' });
  return {
    update: (fraction, stage) => bar.update(Math.round(Math.min(1, Math.max(0, fraction)) * 1000), stage === undefined ? {} : { stage }),
    stop: () => bar.stop(),
  };
}
