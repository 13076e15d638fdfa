import type { CandidateFact, Extraction, FactExtractor } from './types.js';

/** A value: up to the end of its clause, trimmed; longer values are usually not a fact about the user. */
const VALUE = String.raw`([^.;!?\n]{1,120})`;

interface Rule {
  pattern: RegExp;
  /** The pattern states a negative fact itself ("I don't eat meat"): a negation is no reason to skip it. */
  negative?: true;
  fact: (value: string, m: RegExpMatchArray) => CandidateFact | undefined;
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** `metric units over imperial` → `units`: the head noun of a preference, which a later one of the same head replaces. */
function preferenceHead(value: string): string {
  const phrase = value.toLowerCase().split(/\b(?:over|to|than|rather|instead|in|for|with|when|because)\b/)[0] ?? value;
  return words(phrase).at(-1) ?? value.toLowerCase();
}

function clean(value: string): string {
  return value
    .trim()
    .replace(/^(?:actually|now|also|really)\s+/i, '')
    .replace(
      /\s+(?:now|anymore|too|as well|actually|recently|these days|last (?:year|month|week)|this (?:year|month|week)|a (?:while|year|month) ago|in \d{4})$/i,
      '',
    )
    .replace(/[,:]$/, '')
    .trim();
}

function sentence(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/**
 * The patterns, most specific first; each sentence yields at most one fact. Slots make corrections
 * work: "I moved to Paris" after "I live in Lyon" supersedes it (same `location` slot).
 */
const RULES: Rule[] = [
  {
    pattern:
      /\b(?:my name is|call me|i am called|i'm called|my name's)\s+([\p{L}][\p{L}'’-]*(?:\s+[\p{Lu}][\p{L}'’-]*)?)/iu,
    fact: (v) => ({ content: `The user's name is ${clean(v)}.`, slot: 'name' }),
  },
  {
    pattern: new RegExp(String.raw`\bi(?: am|'m|’m)? (?:allergic|intolerant) to ${VALUE}`, 'iu'),
    fact: (v) => ({ content: `The user is allergic to ${clean(v)}.`, slot: null }),
  },
  {
    pattern: new RegExp(
      String.raw`\bi(?:'ve|’ve| have| now| recently| just| finally| also)* (?:live|am living|'m living|’m living|moved|relocated) (?:in|to) ${VALUE}`,
      'iu',
    ),
    fact: (v) => ({ content: `The user lives in ${clean(v)}.`, slot: 'location' }),
  },
  {
    pattern: new RegExp(String.raw`\bi(?: now)? work (?:at|for) ${VALUE}`, 'iu'),
    fact: (v) => ({ content: `The user works at ${clean(v)}.`, slot: 'employer' }),
  },
  {
    pattern: new RegExp(String.raw`\bi(?: now)? work as (?:an? )?${VALUE}`, 'iu'),
    fact: (v) => ({
      content: `The user works as ${/^[aeiou]/i.test(clean(v)) ? 'an' : 'a'} ${clean(v)}.`,
      slot: 'occupation',
    }),
  },
  {
    pattern: new RegExp(String.raw`\bi(?: would| 'd|'d)? (?:much |really )?prefer ${VALUE}`, 'iu'),
    fact: (v) => ({ content: `The user prefers ${clean(v)}.`, slot: `prefers:${preferenceHead(clean(v))}` }),
  },
  {
    pattern: new RegExp(String.raw`\bi (?:don't|do not|dont|never) (?:like|eat|drink|want) ${VALUE}`, 'iu'),
    negative: true,
    fact: (v, m) => ({
      content: `The user does not ${m[0].match(/\b(like|eat|drink|want)\b/i)?.[1]?.toLowerCase() ?? 'like'} ${clean(v)}.`,
      slot: `taste:${words(clean(v)).join(' ')}`,
    }),
  },
  {
    pattern: new RegExp(String.raw`\bi (?:hate|dislike|can't stand|cannot stand) ${VALUE}`, 'iu'),
    fact: (v) => ({ content: `The user dislikes ${clean(v)}.`, slot: `taste:${words(clean(v)).join(' ')}` }),
  },
  {
    pattern: new RegExp(String.raw`\bi (?:really |also )?(?:like|love|enjoy|adore) ${VALUE}`, 'iu'),
    fact: (v) => ({ content: `The user likes ${clean(v)}.`, slot: `taste:${words(clean(v)).join(' ')}` }),
  },
  {
    pattern:
      /\bi(?: am|'m|’m) (?:a |an )?(vegan|vegetarian|pescatarian|diabetic|left-handed|right-handed|colou?r-?blind)\b/iu,
    fact: (v) => ({ content: `The user is ${v.toLowerCase()}.`, slot: `is:${v.toLowerCase()}` }),
  },
  {
    pattern: /\bi(?: am|'m|’m) (\d{1,3}) years? old\b/iu,
    fact: (v) => ({ content: `The user is ${v} years old.`, slot: 'age' }),
  },
  {
    pattern: new RegExp(String.raw`\bmy ((?:[\p{L}'’-]+\s){0,3}?[\p{L}'’-]+) (?:is|are) (?!not\b)${VALUE}`, 'iu'),
    fact: (k, m) => {
      const key = k.toLowerCase();
      if (key === 'name') return undefined;
      return {
        content: `The user's ${key} ${m[0].match(/ (is|are) /i)?.[1] ?? 'is'} ${clean(m[2] ?? '')}.`,
        slot: `my:${key}`,
      };
    },
  },
  {
    pattern: new RegExp(String.raw`\bi (?:have|own|got) (?:a|an|two|three|\d+) ${VALUE}`, 'iu'),
    fact: (v, m) => ({
      content: `The user has ${m[0].match(/ (a|an|two|three|\d+) /i)?.[1] ?? 'a'} ${clean(v)}.`,
      slot: null,
    }),
  },
];

const NEGATED = /\b(?:not|n't|no longer)\b/i;

function factOf(text: string): CandidateFact | undefined {
  for (const rule of RULES) {
    const m = text.match(rule.pattern);
    if (!m?.[1]) continue;
    // "My name is not Bob", "I don't live in Lyon anymore": not a fact to store as stated.
    if (!rule.negative && NEGATED.test(m[0])) return undefined;
    const fact = rule.fact(m[1], m);
    if (fact && fact.content.length <= 300) return fact;
  }
  return undefined;
}

/** `remember that I am …` → the user's own words in the third person, for a fact no rule knows. */
function thirdPerson(text: string): string {
  return sentence(
    clean(text)
      .replace(/\bI am\b|\bI'm\b|\bI’m\b/g, 'the user is')
      .replace(/\bI was\b/g, 'the user was')
      .replace(/\bI\b/g, 'the user')
      .replace(/\bmy\b/gi, "the user's")
      .replace(/\bme\b/gi, 'the user')
      .replace(/^./, (c) => c.toUpperCase()),
  );
}

/**
 * Clauses of the user's turns: sentences, split again where a new first-person clause starts ("My
 * name is Ada and I live in Lyon"). Questions are not statements about the user.
 */
function statements(turn: string): string[] {
  return (turn.match(/[^.!?\n]+[.!?]?/g) ?? [])
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && !s.endsWith('?'))
    .flatMap((s) => s.split(/\s*(?:[,;]\s*(?:and|but|also)?|\s(?:and|but))\s+(?=(?:i|i'm|i’m|my)\b)/i));
}

/**
 * Deterministic extraction (the default; it needs no model and is fast enough to run after every
 * answer): first-person statements matched by a fixed set of patterns (name, where the user lives,
 * work, allergies, diet, preferences, likes and dislikes, "my X is Y", possessions), anything after
 * "remember that", and "forget that …" requests. Its recall is what the patterns cover; bench:memory
 * measures it.
 */
export class RuleBasedExtractor implements FactExtractor {
  readonly name = 'rules';

  async extract(userTurns: readonly string[]): Promise<Extraction> {
    return this.extractNow(userTurns);
  }

  extractNow(userTurns: readonly string[]): Extraction {
    const facts: CandidateFact[] = [];
    const forget: CandidateFact[] = [];
    for (const turn of userTurns) {
      for (const s of statements(turn)) {
        const forgetting = s.match(
          /\b(?:please )?(?:forget|delete|erase|remove)(?: about| that| the fact that)? (.+)$/i,
        );
        if (forgetting?.[1] && !/\b(?:don't|do not|never)\s+forget\b/i.test(s)) {
          const target = forgetting[1].replace(/^(?:what i said about|my)\s+/i, (p) => (/my/i.test(p) ? 'my ' : ''));
          forget.push(factOf(target) ?? { content: clean(target), slot: null });
          continue;
        }
        const remember = s.match(/\b(?:please )?(?:remember|note|keep in mind)(?: that)? (.+)$/i);
        if (remember?.[1]) {
          facts.push(factOf(remember[1]) ?? { content: thirdPerson(remember[1]), slot: null });
          continue;
        }
        const fact = factOf(s);
        if (fact) facts.push(fact);
      }
    }
    return { facts, forget };
  }
}
