/**
 * What a remembered fact can be about. The statement model labels each statement with one of these (or
 * `none`), and the kind is the memory's `slot`: for a kind that holds one value at a time (`one`), a new
 * fact supersedes the memory of that slot, its old text kept in the history; for the others (`many`: one
 * can have two pets and speak three languages) a new fact is added beside the others, and supersedes one
 * of them only when it corrects it (see reconcile.ts).
 */
export const FACT_KINDS = {
  name: 'one',
  home: 'one',
  origin: 'one',
  work: 'one',
  education: 'many',
  family: 'many',
  pets: 'many',
  diet: 'one',
  health: 'many',
  language: 'many',
  reply_language: 'one',
  reply_style: 'many',
  tools: 'many',
  schedule: 'many',
  age: 'one',
  skills: 'many',
  possessions: 'many',
  plans: 'many',
  hobbies: 'many',
  relationship: 'one',
} as const satisfies Record<string, 'one' | 'many'>;

export type FactKind = keyof typeof FACT_KINDS;

/** The model's classes: `none` (no lasting fact) first, then the kinds in a fixed order. */
export const STATEMENT_CLASSES = ['none', ...(Object.keys(FACT_KINDS) as FactKind[])] as const;
export type StatementClass = (typeof STATEMENT_CLASSES)[number];

export function isFactKind(value: string): value is FactKind {
  return Object.hasOwn(FACT_KINDS, value);
}

/** Whether a memory of this slot is replaced by a new fact of the same slot (a kind of one value, or a slot of the API's). */
export function holdsOneValue(slot: string): boolean {
  return isFactKind(slot) ? FACT_KINDS[slot] === 'one' : true;
}

/**
 * Words a question about a kind uses and its facts often do not ("Which city do I live in?" against "The user
 * moved to Paris last year."): indexed with a memory of the kind, so its lexical search finds it.
 */
const KIND_WORDS: Record<FactKind, string> = {
  name: 'name called',
  home: 'live lives home city town country based location',
  origin: 'from origin born grew hometown country',
  work: 'work job employer company occupation profession',
  education: 'study studies school university degree education',
  family: 'family kids children partner parents',
  pets: 'pet pets animal',
  diet: 'diet eat food',
  health: 'health allergy allergic condition medical',
  language: 'language languages speak',
  reply_language: 'language reply answer',
  reply_style: 'style answers replies format',
  tools: 'tools use software stack',
  schedule: 'schedule time routine hours',
  age: 'age old born birthday year',
  skills: 'skills good',
  possessions: 'own owns',
  plans: 'plans plan future',
  hobbies: 'hobbies likes interests enjoys favourite',
  relationship: 'relationship married partner',
};

export function kindWords(slot: string): string {
  return isFactKind(slot) ? KIND_WORDS[slot] : '';
}
