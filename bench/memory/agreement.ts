/**
 * Whether a stored memory reads as correct English after the user's words were put in the third person:
 * written apart from the product's rewrite (src/memory/extraction/third-person.ts) and with its own word lists,
 * so a verb the rewrite forgets to agree is caught here rather than agreed the same wrong way twice.
 * Checked: "the user" (a singular subject) followed by a plural or base verb ("the user live", "the user have",
 * "the user don't"), a second verb after "and" in a clause of that subject ("the user lives in Lisbon and work
 * …"), a first-person pronoun left behind ("The user: Cache me …"), and an assistant-directed request stored as
 * a fact ("The user: Cache the user …"). "My wife and I live" becomes "The user's wife and the user live":
 * a subject of two, plural on purpose, so a short noun phrase before "and the user" is left alone.
 */

/** Forms that never follow a singular subject. */
const PLURAL_FORMS = new Set(
  "am are were have do don't dont haven't havent aren't arent weren't werent 're 've 'm wanna gotta".split(' '),
);
/** Common verbs in their base form (a singular subject needs the -s form). Not verbs whose base is their past. */
const BASE_VERBS = new Set(
  `live work speak like love hate need want use own prefer go study teach play drink eat run take get keep know
  write make drive wear follow avoid support rent bike knit code cook swim travel visit enjoy watch listen try
  plan hope think believe feel remember forget start stop finish learn practise practice train commute wake sleep
  walk ride fly sing dance paint draw care mind miss move stay leave come spend save earn pay manage lead
  run own belong suffer struggle deal wait understand see hear smell taste look seem sound grow raise volunteer
  attend teach collect bake brew fish hunt garden hike climb cycle lift box surf ski skate jog row vote pray
  celebrate fast observe stick tend`.split(/\s+/),
);
/** Words between a subject and its verb that are not the verb ("the user also lives"). */
const ADVERBS = new Set(
  'also now usually always often sometimes never really mostly currently still just recently actually only mainly generally typically normally rarely even finally already basically honestly definitely totally kinda personally primarily too both all'.split(
    ' ',
  ),
);
const FIRST_PERSON = /(?<![\p{L}'])(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|we're|our|ours|us)(?![\p{L}'])/iu;
/** "The user: Cache …", "The user: Give …": a request to the assistant kept as if it were a fact. */
const REQUEST_AS_FACT = /^The user: (?:please\s+)?[a-z]+\s+(?:the user|me|us)\b/i;

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
}

/** Where "the user" is one of two subjects: "The user's wife and the user live" (a short noun phrase before "and"). */
function compoundSubject(before: string): boolean {
  return (
    /^(?:the user's|his|her|their)?\s*(?:[\p{L}'-]+\s+){0,3}and\s+$/iu.test(before) &&
    !/\b(?:is|was|has)\b/i.test(before)
  );
}

/** What reads wrong in a stored memory; empty when nothing does. */
export function agreementErrors(memory: string): string[] {
  const errors: string[] = [];
  const quoted = memory.replace(/"[^"]*"/g, '""');
  const body = quoted.replace(/^The user: /, '');
  if (FIRST_PERSON.test(body.replace(/^(?:The user's|The user)\b/, ''))) errors.push('a first-person word is left');
  if (REQUEST_AS_FACT.test(memory)) errors.push('a request is stored as a fact');
  for (const clause of quoted.split(/[.;:!?]\s+|,\s+(?=the user\b)/i)) {
    const at = [...clause.matchAll(/\bthe user(?!'s)\b/gi)];
    for (const m of at) {
      const before = clause.slice(0, m.index);
      if (compoundSubject(before)) continue;
      const after = words(clause.slice((m.index ?? 0) + m[0].length));
      let i = 0;
      while (i < after.length && ADVERBS.has(after[i] as string)) i++;
      const verb = after[i];
      if (verb === undefined) continue;
      if (PLURAL_FORMS.has(verb) || BASE_VERBS.has(verb)) errors.push(`"the user ${verb}"`);
      // A second verb of the same subject: "the user lives in Lisbon and work as a designer".
      const rest = after.slice(i + 1);
      const and = rest.indexOf('and');
      const next = and >= 0 ? rest[and + 1] : undefined;
      const present = /^(?:is|has|does|was)$|[^s]s$/.test(verb);
      if (present && next && (PLURAL_FORMS.has(next) || BASE_VERBS.has(next)) && rest[and + 2] !== 'the')
        errors.push(`"… and ${next}" after "the user ${verb}"`);
    }
  }
  return errors;
}
