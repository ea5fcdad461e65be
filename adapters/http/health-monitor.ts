import type { Store } from '../store/connection.js';

/** One dependency's state as a probe saw it. */
export interface ComponentState {
  status: 'ok' | 'down' | 'not_configured';
  /** When this state was observed (ISO-8601). */
  checked_at: string;
  latency_ms: number | null;
  /** The raw probe payload or error; only authenticated callers see it. */
  detail: Record<string, unknown>;
}

export type ComponentName = 'database' | 'agent' | 'inference';

/** Probes the database, the agent and the inference server, each with a deadline. @public */
export class HealthProbes {
  /** `urls` is read at each probe: a process that binds port 0 fills in the agent URL after wiring. */
  constructor(
    private readonly store: Store,
    private readonly urls: { readonly agentUrl: string; readonly inferenceUrl: string | undefined },
    private readonly timeoutMs = 2000,
  ) {}

  async all(): Promise<Record<ComponentName, ComponentState>> {
    const [database, agent, inference] = await Promise.all([this.database(), this.agent(), this.inference()]);
    return { database, agent, inference };
  }

  async database(): Promise<ComponentState> {
    return timed(async () => {
      await this.store.ping(this.timeoutMs);
      return { dialect: this.store.dialect };
    });
  }

  /** The agent's own probe: mode, services bound, library version. */
  async agent(): Promise<ComponentState> {
    return timed(() => fetchJson(`${this.urls.agentUrl}/__understudy/health`, this.timeoutMs));
  }

  async inference(): Promise<ComponentState> {
    const url = this.urls.inferenceUrl;
    if (!url) return { status: 'not_configured', checked_at: new Date().toISOString(), latency_ms: null, detail: {} };
    return timed(() => fetchJson(`${url}/health`, this.timeoutMs));
  }
}

async function fetchJson(url: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { body: text.slice(0, 200) };
  }
}

async function timed(probe: () => Promise<Record<string, unknown>>): Promise<ComponentState> {
  const started = performance.now();
  const checked_at = new Date().toISOString();
  try {
    const detail = await probe();
    return { status: 'ok', checked_at, latency_ms: Math.round(performance.now() - started), detail };
  } catch (err) {
    const e = err as Error;
    const message = e.name === 'TimeoutError' ? 'probe timed out' : e.message;
    return { status: 'down', checked_at, latency_ms: Math.round(performance.now() - started), detail: { error: message } };
  }
}

/**
 * The cached health summary: probes run in the background every `intervalMs`; a read never
 * waits on a dependency, so it answers at once even while one is down.
 * @public
 */
export class HealthMonitor {
  #state: Record<ComponentName, ComponentState> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #refreshing: Promise<void> | null = null;

  constructor(
    private readonly probes: HealthProbes,
    private readonly intervalMs: number,
  ) {}

  /** Probe once now (not waited on by readers) and then every interval. */
  start(): void {
    if (this.#timer) return;
    void this.refresh();
    this.#timer = setInterval(() => void this.refresh(), this.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  refresh(): Promise<void> {
    this.#refreshing ??= this.probes
      .all()
      .then((state) => {
        this.#state = state;
      })
      .finally(() => {
        this.#refreshing = null;
      });
    return this.#refreshing;
  }

  /** The summary as the API shows it; `redact` empties every detail. */
  summary(redact: boolean, now = Date.now()) {
    const components: Record<string, ComponentState & { stale_for_seconds: number | null }> = {};
    const names: ComponentName[] = ['database', 'agent', 'inference'];
    for (const name of names) {
      const s = this.#state?.[name];
      components[name] = s
        ? { ...s, detail: redact ? {} : s.detail, stale_for_seconds: Math.max(0, Math.round((now - Date.parse(s.checked_at)) / 100) / 10) }
        : { status: 'down', checked_at: '', latency_ms: null, detail: redact ? {} : { error: 'not probed yet' }, stale_for_seconds: null };
    }
    const down = Object.values(components).some((c) => c.status === 'down');
    return { status: this.#state ? (down ? 'degraded' : 'ok') : 'unknown', components, refresh_interval_seconds: this.intervalMs / 1000, detail_redacted: redact };
  }
}
