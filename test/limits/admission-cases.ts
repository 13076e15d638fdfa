import { minuteCutoff } from '../../src/limits/admission-rule.js';
import type { AdmissionCounts, Limits, WindowName } from '../../src/limits/types.js';
import { utcDayStart, utcMonthStart } from '../../src/limits/windows.js';

/** The cases the admission rule and PostgreSQL's pvai_admit must agree on (admission-rule-parity.test.ts). */

const T = Date.UTC(2026, 4, 12, 10, 0, 0);
const DAY_END = Date.UTC(2026, 4, 12, 23, 59, 59, 999);
const MONTH_END = Date.UTC(2026, 4, 31, 23, 59, 59, 999);
const ROOMY: Limits = { rpm: 100, rpd: 1000, monthly: 10_000 };

interface Counter {
  window: 'day' | 'month';
  start: number;
  count: number;
}

/** One decision: what is stored before it, the request, and the answer the rule gives. */
export interface DecisionCase {
  name: string;
  limits: Limits;
  /** Admission times stored for the account (any age, future ones too). */
  times: number[];
  counters: Counter[];
  now: number;
  /** false: a peek (GET /z1/usage), which counts nothing. */
  consume: boolean;
  admitted: boolean;
  full: WindowName[];
}

const day = (count: number, now = T): Counter => ({ window: 'day', start: utcDayStart(now), count });
const month = (count: number, now = T): Counter => ({ window: 'month', start: utcMonthStart(now), count });
const decision = (c: Partial<DecisionCase> & Pick<DecisionCase, 'name' | 'admitted' | 'full'>): DecisionCase => ({
  limits: ROOMY,
  times: [],
  counters: [],
  now: T,
  consume: true,
  ...c,
});

export const DECISIONS: DecisionCase[] = [
  decision({ name: 'nothing stored', admitted: true, full: [] }),
  decision({
    name: 'one below the minute limit',
    limits: { ...ROOMY, rpm: 3 },
    times: [T - 2, T - 1],
    admitted: true,
    full: [],
  }),
  decision({
    name: 'exactly at the minute limit',
    limits: { ...ROOMY, rpm: 3 },
    times: [T - 3, T - 2, T - 1],
    admitted: false,
    full: ['minute'],
  }),
  decision({
    name: 'past the minute limit (a lowered tier)',
    limits: { ...ROOMY, rpm: 2 },
    times: [T - 3, T - 2, T - 1],
    admitted: false,
    full: ['minute'],
  }),
  decision({
    name: 'a time exactly 60 s old has left the minute',
    limits: { ...ROOMY, rpm: 2 },
    times: [T - 60_000, T - 1],
    admitted: true,
    full: [],
  }),
  decision({
    name: 'a time 59.999 s old still counts',
    limits: { ...ROOMY, rpm: 2 },
    times: [T - 59_999, T - 1],
    admitted: false,
    full: ['minute'],
  }),
  decision({
    name: 'times older than the minute never count',
    limits: { ...ROOMY, rpm: 1 },
    times: [T - 3_600_000, T - 120_000, T - 60_001],
    admitted: true,
    full: [],
  }),
  decision({
    name: 'a clock that moved back: later times count',
    limits: { ...ROOMY, rpm: 2 },
    times: [T + 1, T + 30_000],
    admitted: false,
    full: ['minute'],
  }),
  decision({
    name: 'the same millisecond many times (a burst)',
    limits: { ...ROOMY, rpm: 5 },
    times: [T, T, T, T, T],
    admitted: false,
    full: ['minute'],
  }),
  decision({
    name: 'one below the day limit',
    limits: { ...ROOMY, rpd: 4 },
    counters: [day(3), month(3)],
    admitted: true,
    full: [],
  }),
  decision({
    name: 'exactly at the day limit',
    limits: { ...ROOMY, rpd: 4 },
    counters: [day(4), month(4)],
    admitted: false,
    full: ['day'],
  }),
  decision({
    name: 'exactly at the month limit',
    limits: { ...ROOMY, monthly: 7 },
    counters: [day(2), month(7)],
    admitted: false,
    full: ['month'],
  }),
  decision({
    name: 'day and month full, the minute has room',
    limits: { rpm: 5, rpd: 3, monthly: 3 },
    times: [T - 1],
    counters: [day(3), month(3)],
    admitted: false,
    full: ['day', 'month'],
  }),
  decision({
    name: 'every window full',
    limits: { rpm: 1, rpd: 1, monthly: 1 },
    times: [T - 1],
    counters: [day(1), month(1)],
    admitted: false,
    full: ['minute', 'day', 'month'],
  }),
  decision({
    name: 'a limit of 0 refuses the first request',
    limits: { ...ROOMY, rpd: 0 },
    admitted: false,
    full: ['day'],
  }),
  decision({
    name: 'the last millisecond of the day still counts it',
    limits: { ...ROOMY, rpd: 2 },
    now: DAY_END,
    counters: [day(2, DAY_END), month(2, DAY_END)],
    admitted: false,
    full: ['day'],
  }),
  decision({
    name: 'a new UTC day starts from 0',
    limits: { ...ROOMY, rpd: 2 },
    now: DAY_END + 1,
    counters: [day(2, DAY_END), month(2, DAY_END)],
    admitted: true,
    full: [],
  }),
  decision({
    name: 'a new UTC month starts from 0',
    limits: { ...ROOMY, monthly: 2 },
    now: MONTH_END + 1,
    counters: [day(1, MONTH_END), month(2, MONTH_END)],
    admitted: true,
    full: [],
  }),
  decision({
    name: 'a peek below the limits',
    limits: { ...ROOMY, rpm: 2 },
    times: [T - 1],
    consume: false,
    admitted: true,
    full: [],
  }),
  decision({
    name: 'a peek at the limits',
    limits: { ...ROOMY, rpm: 1 },
    times: [T - 1],
    consume: false,
    admitted: false,
    full: ['minute'],
  }),
];

/** What a store reads from the stored state: the counts of the request's windows. */
export function countsOf(c: DecisionCase): Omit<AdmissionCounts, 'admitted'> {
  const live = c.times.filter((t) => t > minuteCutoff(c.now));
  const counter = (window: Counter['window'], start: number) =>
    c.counters.find((k) => k.window === window && k.start === start)?.count ?? 0;
  return {
    minuteCount: live.length,
    minuteOldest: live.length === 0 ? null : Math.min(...live),
    dayCount: counter('day', utcDayStart(c.now)),
    monthCount: counter('month', utcMonthStart(c.now)),
  };
}

/** The state after the request: the minute's live times, and the request's day and month counters. */
export function stateAfter(c: DecisionCase) {
  const before = countsOf(c);
  const counted = c.admitted && c.consume ? 1 : 0;
  const minute = c.times.filter((t) => t > minuteCutoff(c.now));
  if (counted) minute.push(c.now);
  return {
    minute: minute.sort((a, b) => a - b),
    day: before.dayCount + counted,
    month: before.monthCount + counted,
  };
}

/** A request of a sequence, `at` ms after its start, and whether it is admitted. */
export interface Step {
  at: number;
  admitted: boolean;
  peek?: boolean;
}

export interface Sequence {
  name: string;
  limits: Limits;
  start: number;
  steps: Step[];
}

const admitted = (...ats: number[]): Step[] => ats.map((at) => ({ at, admitted: true }));
const refused = (...ats: number[]): Step[] => ats.map((at) => ({ at, admitted: false }));

export const SEQUENCES: Sequence[] = [
  {
    name: 'a burst in one millisecond admits the minute limit',
    limits: { ...ROOMY, rpm: 3 },
    start: T,
    steps: [...admitted(0, 0, 0), ...refused(0, 0)],
  },
  {
    name: 'the minute slides: a slot frees exactly 60 s after its admission',
    limits: { ...ROOMY, rpm: 2 },
    start: T,
    steps: [...admitted(0, 1_000), ...refused(59_999), ...admitted(60_000), ...refused(60_999), ...admitted(61_000)],
  },
  {
    name: 'a clock that moves back inside the minute',
    limits: { ...ROOMY, rpm: 2 },
    start: T,
    steps: [
      ...admitted(30_000, 0),
      ...refused(10),
      { at: 5, admitted: false, peek: true },
      ...admitted(60_001),
      ...refused(60_002),
    ],
  },
  {
    name: 'the day limit holds to the end of the UTC day and no further',
    limits: { ...ROOMY, rpd: 2 },
    start: DAY_END - 10,
    steps: [...admitted(0, 10), ...refused(10), ...admitted(11, 12), ...refused(13)],
  },
  {
    name: 'the month limit holds to the end of the UTC month and no further',
    limits: { ...ROOMY, monthly: 3 },
    start: MONTH_END - 2,
    steps: [
      ...admitted(0, 1, 2),
      ...refused(2),
      { at: 2, admitted: false, peek: true },
      ...admitted(3, 4, 5),
      ...refused(6),
    ],
  },
  {
    name: 'peeks count nothing',
    limits: { ...ROOMY, rpm: 1 },
    start: T,
    steps: [
      { at: 0, admitted: true, peek: true },
      { at: 1, admitted: true, peek: true },
      ...admitted(2),
      ...refused(3),
    ],
  },
];
