/**
 * A user's statement in the third person, as a memory is stored ("I'm based in Lisbon these days" → "The
 * user is based in Lisbon these days."): pronouns swapped and the verb after them agreed. Instructions
 * about answers become what the user wants ("Please reply in Spanish" → "The user wants you to reply in
 * Spanish."), and a statement with its subject left out gets one ("Born in '88" → "The user was born in '88.").
 */

/** What a statement that says nothing of who it is about is stored behind ("The user: data engineer at Spotify."). */
export const FRAGMENT = 'The user: ';

/** Words between a subject and its verb that the verb's agreement skips over ("I also speak", "we now live"). */
const ADVERBS = new Set(
  'also now usually always often sometimes never really mostly currently still just recently actually only mainly generally typically normally rarely even finally already basically honestly definitely totally kinda sorta def personally mostly primarily'.split(
    ' ',
  ),
);
/** Verbs that do not change after "the user": modals, past forms, negations already agreed. */
const UNCHANGED = new Set(
  "can can't cant cannot could couldn't will won't would wouldn't should shouldn't must may might shall did didn't was wasn't had hadn't used 'd got went grew made took began became bought brought came ate fell felt found flew forgot gave knew left lost met paid put ran said saw sold sent spent spoke stood swam taught told thought understood won wrote drove kept quit read let set built broke chose drew held led lent meant rode rose shut sang sat slept split spun stuck struck swore threw woke wore awoke bore beat bent bit blew bred caught clung crept dealt dug dove drank fed fled flung forgave froze hid hung knelt laid lay leapt learnt lit misled mistook overcame overtook rang rewrote redid rebuilt reran resold retook sank shook shone shot shrank slid sped spelt spat sprang stank stole stung strode sought swept swung tore trod underwent undid upset wept wound withdrew withheld wrung".split(
    ' ',
  ),
);
const AGREED: Record<string, string> = {
  am: 'is',
  are: 'is',
  were: 'was',
  have: 'has',
  do: 'does',
  "don't": "doesn't",
  dont: "doesn't",
  "haven't": "hasn't",
  havent: "hasn't",
  "aren't": "isn't",
  "'m": 'is',
  go: 'goes',
  wanna: 'wants to',
  gotta: 'has to',
};
/** Subject pronouns and what they become; `true`: the verb after them is agreed. */
const SUBJECTS: Record<string, [string, boolean]> = {
  i: ['the user', true],
  we: ['the user', true],
  "i'm": ['the user is', false],
  im: ['the user is', false],
  "we're": ['the user is', false],
  "i've": ['the user has', false],
  ive: ['the user has', false],
  "we've": ['the user has', false],
  "i'd": ['the user would', false],
  "we'd": ['the user would', false],
  "i'll": ['the user will', false],
  "we'll": ['the user will', false],
};
const OBJECTS: Record<string, string> = {
  my: "the user's",
  our: "the user's",
  mine: "the user's",
  ours: "the user's",
  me: 'the user',
  us: 'the user',
  myself: 'themselves',
  ourselves: 'themselves',
};

/**
 * Verbs that, after "and" in a clause whose subject is the user, are a second verb of that subject ("and work
 * as a designer", "and have two kids"); any other word there is left as it is ("and English", "and a cat").
 */
const SECOND_VERBS = new Set(
  'live work have do speak study teach play run own use love like hate eat drink go need want take write make drive ride rent prefer know keep wear follow avoid support cook bake knit swim travel enjoy hope plan try raise manage volunteer commute sleep wake get spend save earn miss care struggle suffer'.split(
    ' ',
  ),
);

/** Ending in -ed without being past forms. */
const PRESENT_IN_ED = new Set(
  'need feed bleed breed speed proceed succeed exceed embed shed wed shred seed weed'.split(' '),
);

function agree(verb: string): string {
  const lower = verb.toLowerCase();
  if (AGREED[lower]) return AGREED[lower];
  if (
    UNCHANGED.has(lower) ||
    (/ed$/.test(lower) && !PRESENT_IN_ED.has(lower)) ||
    /n't$/.test(lower) ||
    !/^[a-z]+$/.test(lower)
  )
    return verb;
  if (/(?:s|sh|ch|x|z|o)$/.test(lower)) return `${verb}es`;
  if (/[^aeiou]y$/.test(lower)) return `${verb.slice(0, -1)}ies`;
  return `${verb}s`;
}

/** Splits a word from the punctuation after it ("Lisbon," → ["Lisbon", ","]). */
function split(word: string): [string, string] {
  const m = word.match(/^(.*?)([.,;:!?)"]*)$/);
  return [m?.[1] ?? word, m?.[2] ?? ''];
}

/**
 * "my wife and I live", "Ana and I live": a subject of two, whose verb stays plural. Only when what comes
 * before "and" is a short phrase with no verb in it: in "my name is Dana and I live in Porto" the "I" is
 * the subject of a clause of its own.
 */
function subjectOfTwo(before: readonly string[]): boolean {
  if (before.at(-1)?.toLowerCase() !== 'and') return false;
  const phrase = before.slice(0, -1);
  return phrase.length >= 1 && phrase.length <= 4 && !phrase.some((w) => PHRASE_VERB.test(w));
}
const PHRASE_VERB =
  /^(?:is|are|was|were|am|be|been|has|have|had|do|does|did|will|would|can|could|should|[\p{L}']*(?:n't)|the user(?: [a-z]+)?)$/iu;

function swapPronouns(text: string): { text: string; hasSubject: boolean } {
  const words = text.split(' ');
  const out: string[] = [];
  let agreeNext = false;
  /** The clause's subject is the user alone and its verb was agreed: a second verb after "and" is agreed too. */
  let singular = false;
  let hasSubject = false;
  for (const word of words) {
    const [core, tail] = split(word);
    const lower = core.toLowerCase();
    const subject = SUBJECTS[lower];
    if (subject) {
      const ofTwo = subjectOfTwo(out);
      out.push(subject[0] + tail);
      agreeNext = subject[1] && !ofTwo;
      // "I'm …", "I've …" are present and agreed; "I'd", "I'll" are not ("would like … and love" stays).
      singular = !ofTwo && !subject[1] && /^(?:i'm|im|we're|i've|ive|we've)$/.test(lower);
      hasSubject = true;
      continue;
    }
    if (OBJECTS[lower]) {
      out.push(OBJECTS[lower] + tail);
      agreeNext = false;
      continue;
    }
    if (agreeNext && (ADVERBS.has(lower) || lower === 'and' || lower === 'or')) {
      // "I also speak"; "I and my wife live" (the verb after a subject of two stays plural).
      if (lower === 'and' || lower === 'or') agreeNext = false;
      out.push(word);
      continue;
    }
    if (singular && !agreeNext && (out.at(-1) === 'and' || out.at(-1) === 'but') && SECOND_VERBS.has(lower)) {
      // "I live in Lisbon and work as a designer": the second verb has the same subject.
      out.push(agree(core) + tail);
      continue;
    }
    if (agreeNext) {
      const agreed = agree(core);
      // Only a verb in the present was agreed ("likes"): "I can swim and cook" keeps "cook".
      singular = agreed !== core;
      out.push(agreed + tail);
    } else out.push(word);
    if (/[.;!?]$/.test(tail)) singular = false;
    agreeNext = false;
  }
  return { text: out.join(' '), hasSubject };
}

/** Imperative verbs that open an instruction about answers ("Keep your answers short"). */
const INSTRUCTION =
  /^(?:please\s+)?(?:reply|answer|respond|write|keep|use|give|talk|speak|explain|address|avoid|stop|start|include|format|add|always|never|don't|do not|no need to|make|be|show|put|skip)\b/i;
/** Subjects left out: what is put back in front of the statement. */
const ELIDED: Array<[RegExp, string]> = [
  [/^(?:born|raised|brought up)\b/i, 'The user was '],
  [/^been\b/i, 'The user has '],
  [/^(?:got|have)\b/i, 'The user '],
  [/^(?:grew up|moved|relocated)\b/i, 'The user '],
  [
    /^(?:married|single|engaged|divorced|widowed|retired|allergic|fluent|based|living|working|studying|originally|currently)\b/i,
    'The user is ',
  ],
];

function sentence(text: string): string {
  const t = text.trim().replace(/[\s,;:-]+$/, '');
  const capital = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** The statement in the third person, as one sentence. */
export function thirdPerson(statement: string): string {
  const { text, hasSubject } = swapPronouns(statement.trim());
  if (hasSubject) return sentence(text);
  if (INSTRUCTION.test(statement)) {
    const wish = text
      .replace(/^please\s+/i, '')
      .replace(/,?\s+please$/i, '')
      .replace(/^(?:don't|do not)\s+/i, 'not ');
    return sentence(`The user wants you to ${wish.charAt(0).toLowerCase()}${wish.slice(1)}`);
  }
  for (const [pattern, front] of ELIDED) {
    if (pattern.test(text)) {
      const rest = /^(?:got|have)\b/i.test(text) ? text.replace(/^(?:got|have)\b/i, 'has') : text;
      return sentence(front + rest.charAt(0).toLowerCase() + rest.slice(1));
    }
  }
  const here = text.match(/^(.+?)\s+here$/i);
  if (here?.[1]) return sentence(`The user is ${here[1].replace(/^(?:a|an)\s+/i, (a) => a.toLowerCase())}`);
  if (/^(?:the user's|the user)\b/i.test(text)) return sentence(text);
  return sentence(`${FRAGMENT}${text}`);
}
