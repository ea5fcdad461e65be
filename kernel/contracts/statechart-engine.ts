/** A statechart: states and the events that move between them. */
export interface Statechart {
  id: string;
  initial: string;
  states: Record<string, { on?: Record<string, string>; final?: boolean }>;
}

/** Kind `statechart-engine`: steps a resource through a machine. */
export interface StatechartEngine {
  validate(chart: Statechart): string[];
  next(chart: Statechart, state: string, event: string): string | null;
}
