/** Milliseconds since the Unix epoch. Injected everywhere time matters so tests can move it. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
