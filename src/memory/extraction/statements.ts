import { forThisConversation, oneOffInstruction, statesNothingOfTheUser } from './requests.js';

/**
 * A user's turn cut into the statements that may tell something lasting about them: sentences, split again
 * where a new clause starts ("I'm Ines, I live in Porto and I teach maths"), with questions, hypotheticals
 * and requests about this answer left out, and what people put in front of a statement ("btw", "oh and",
 * "actually", "remember that") taken off and noted. Pure string work, microseconds per turn: it runs on the
 * request path to decide whether a turn is queued for extraction at all.
 */

export interface Statement {
  /** The clause with the filler in front of it taken off and a trailing correction ("…, not Tartu") cut. */
  text: string;
  /** The clause as written (quotes and spaces normalised): what the model's word features read. */
  raw: string;
  /** The user corrects something said before ("actually", "no longer", "not … anymore", "switched to"). */
  correction: boolean;
  /**
   * The statement says something changed ("now", "these days", "turned", "sold", "switched"): for a kind
   * of many values it may supersede the memory it updates (reconcile.ts decides by meaning).
   */
  changed: boolean;
  /** Old values the correction names ("…, not Tartu", "from VS Code to Neovim", "no longer vegetarian"). */
  replaces: string[];
  /** Asked to be remembered ("remember that…", "keep in mind…"): kept whatever the model says. */
  remember: boolean;
}

export interface TurnStatements {
  statements: Statement[];
  /** What the user asked to be forgotten ("forget that I live in Lyon"), as written. */
  forget: string[];
}

/** Instructions about how to answer, which hold for later turns too. */
const ABOUT_ANSWERS =
  /\b(?:answers?|repl(?:y|ies)|respon(?:d|ses?)|explanations?|talk to me|write to me|speak to me|address me|call me|from now on|going forward|in (?:the )?future|by default|always|every time|whenever|when (?:you|u) can|units|metric|imperial|bullet points?|emojis?|formal|informal|casual|concise|brief|tone|jargon|sources)\b/i;
/** A question that asks for something lasting ("Could you reply in Estonian from here on?"): an instruction. */
const LASTING =
  /\b(?:from now on|from here on|going forward|in (?:the )?future|always|every time|whenever|by default|in your (?:replies|responses|answers))\b/i;
/** A request about this answer only ("Tell me a story", "Summarise this"): it states nothing about the user. */
const REQUEST =
  /^(?:please\s+)?(?:tell|say|write|give|explain|show|make|translate|summari[sz]e|list|create|generate|help|find|fix|draft|compose|describe|compare|suggest|recommend|calculate|convert|rewrite|rephrase|check|review|proofread|edit|shorten|expand|continue|repeat|define|outline|brainstorm|design|build|implement|debug|solve|let's|lets|go on|try again)\b/i;
/** Nothing but a greeting, thanks or a yes. */
const SMALL_TALK =
  /^(?:thanks|thank you|thx|ty|cheers|great|cool|nice|perfect|awesome|ok|okay|yes|no|yep|nope|sure|hello|hi|hey|good (?:morning|afternoon|evening|night)|bye|lol|haha|please|pls|plz)\b[\s!.,]*(?:(?:so much|a lot|again|mate|man)\b[\s!.,]*)*$/i;
const HYPOTHETICAL =
  /^(?:if|suppose|supposing|imagine|assume|assuming|what if|let's say|lets say|say|in case|hypothetically|when i retire|pretend|let's pretend|role-?play|role play|act as|in (?:this|the|my|our) (?:story|game|scenario|roleplay|role-play|exercise|example|novel|script)|for (?:this|the) (?:exercise|example|sake of argument|story|game))\b/i;
const QUESTION_START =
  /^(?:can|could|would|will|what|what's|how|why|where|when|which|who|whom|whose|do|does|did|is|are|was|were|should|shall|may|might|any|anything|have you|has)\b/i;

/** A question after a comma, behind the word that joins it ("…, so which colours should I use?"). */
const QUESTION_AFTER =
  /^(?:so\s+|and\s+|but\s+)?(?:what|what's|how|why|where|which|who|can|could|would|should|do|does|is|are|any)\b/i;
/** A question typed without its question mark ("is Zürich or Geneva prettier", "whats thank you in korean"). */
const BARE_QUESTION =
  /^(?:is|are|was|were|what|what's|whats|how|how's|hows|why|where|where's|wheres|which|who|who's|whos|can (?:you|u)|could (?:you|u)|would (?:you|u)|do (?:you|u)|does|did (?:you|u)|should i|any (?:tips|ideas|idea|suggestions|recommendations))\b/i;
/** In front of a statement and meaningless for it ("oh and btw, …"). */
const FILLER =
  /^(?:oh|ah|um+|uh+|hmm+|well|ok(?:ay)?|so|and|but|also|plus|hi|hey|hello|yo|lol|haha|tbh|ngl|honestly|anyway|btw|by the way|fyi|just so you know|just fyi|for the record|for context|for reference|heads up|quick note|side note|as i said|like i said|as you know|just letting you know|just to let you know|one more thing|another thing)\b[\s,:;!.-]*/i;
/** In front of a statement that corrects an earlier one. */
const CORRECTING =
  /^(?:actually|correction|update|scratch that|no wait|wait|sorry|oops|my bad|i misspoke|i meant to say|i meant|small correction|quick correction|to correct myself|not quite)\b[\s,:;!.-]*/i;
const REMEMBER =
  /^(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:(?:remember|keep in mind|bear in mind|don't forget|do not forget|never forget|make a note|take note)(?:\s+(?:that|this))?\b|(?:note|save|store)(?:\s+(?:that|this)\b|\s*:))[\s,:]*/i;
const FORGET =
  /^(?:please\s+)?(?:forget|delete|erase|remove|drop)\s+(?:about\s+|that\s+|the fact that\s+|what i (?:said|told you) about\s+)?(.+)$/i;
/** After a statement and meaningless for it ("got 2 cats lol"). */
const TRAILING_FILLER =
  /(?:[\s,]+(?:lol|haha+|tbh|ngl|btw|fyi|thx|thanks|thank you|please|pls|plz|though|lmao|:\)|:d))+[.!]*$/i;
/** A question tagged on to a statement ("…, ok?", "…, right?"): the statement stays one. */
const TAG_QUESTION = /,?\s+(?:ok|okay|right|yeah|yes|alright|pls|please|k|got it|understood|deal)\s*\?+\s*$/i;
/** Words that say a statement updates an earlier one; "also", "too", "another" say it adds to it. */
const CHANGE_WORDS =
  /\b(?:now|these days|nowadays|anymore|any more|no longer|instead|switched|changed|moved|turned|since|lost|sold|replaced|rewrote|upgraded|swapped|traded)\b/i;
const ADDITION_WORDS = /\b(?:also|too|as well|another|additionally|in addition)\b/i;
/** Words inside a statement that make it a correction of something said before. */
const CORRECTION_WORDS =
  /\b(?:actually|no longer|anymore|any more|instead|switched|changed|not anymore|i meant|misspoke|scratch that|correction|sold|replaced|swapped|traded|quit|gave up|stopped)\b/i;
/** The tail naming the value a statement replaces: "…, not Tartu", "…, not two". Not "I'm not vegan". */
const NOT_TAIL =
  /(?:,\s*|\s+)(?:and\s+|but\s+)?not\s+(?:in\s+|at\s+|from\s+|with\s+|a\s+|an\s+|the\s+)?([^,;]{1,40}?)\s*(?:anymore|any more)?$/i;
const AUX_BEFORE_NOT =
  /\b(?:i'm|im|am|is|are|was|were|do|does|did|can|could|will|would|should|have|has|had|i|we|it's|that's|be)$/i;
const INSTEAD_TAIL = /,?\s*(?:instead of|rather than)\s+([^,;]{1,40})$/i;
const FROM_TO =
  /\b(?:switched|moved|changed|went|upgraded|relocated|transferred|migrated)\b.*?\bfrom\s+(.{1,40}?)\s+to\s+/i;
const NO_LONGER = /\b(?:no longer|not\s+.{1,40}?\s+anymore|not\s+.{1,40}?\s+any more)\b/i;

const SENTENCES = /(?<=[.!?…])\s+|\n+|\s*;\s*|\s+[—–]\s+|\s+-\s+|:\s+(?=(?:i|i'm|im|my|we|our)\b)/i;
/**
 * Where a sentence holds another clause: before a new subject ("…, I live in Porto", "… and my wife is …")
 * or a question ("…, can you …"). Not before "who"/"which"/"where" (a relative clause belongs to its
 * sentence: "My employer is Spotify, where I'm a data engineer"), and not before "my"/"our" right after a
 * name ("Bruno, our golden retriever, needs long walks"): that is an apposition.
 */
const CLAUSE_BREAK =
  /(?<!^[\p{L}'-]+),\s*(?:and\s+|but\s+|so\s+|also\s+|plus\s+)?(?=(?:my|our)\b)|,\s*(?:and\s+|but\s+|so\s+|also\s+|plus\s+)?(?=(?:i|i'm|im|i've|ive|i'd|we|we're|can|could|would|will|do|does|please|any|should|btw|also)\b)|\s+(?:and|but|so|plus|while)\s+(?=(?:i|i'm|im|i've|ive|i'd|my|we|we're|our)\b)|,?\s+(?=so\s+(?:please|suggest|recommend|avoid|give|tell|show|write|explain|help|find|make|list|keep|use|skip|send|pick|no|don't)\s)|,\s*(?=(?:suggest|recommend|avoid|give|tell|show|explain|find|write)\s)/iu;
/** Abbreviations whose full stop ends no sentence ("10 p.m. to 6 a.m.", "Dr. Okafor", "e.g. Python"). */
const ABBREVIATION =
  /\b(?:[a-zA-Z]\.)+[a-zA-Z]\.(?=\s+[\p{Ll}\p{N}])|\b(?:[Dd]r|[Mm]rs?|[Mm]s|[Ss]t|[Pp]rof|[JjSs]r|vs)\.|\b(?:etc|approx|no)\.(?=\s+[\p{Ll}\p{N}])/gu;
const STOP = '\u2024';
/** A character SENTENCES needs to match at all. */
const MAY_END_SENTENCE = /[.!?…\n;—–:-]/;
/** What CLAUSE_BREAK needs to match at all: a comma, or a conjunction between spaces. */
const MAY_BREAK_CLAUSE = /,|\s(?:and|but|so|plus|while)\s/i;

/** The parts that hold more than spaces: the array itself when all do (nearly always), no copy made. */
function withoutBlanks(parts: string[]): string[] {
  for (const part of parts) if (part.trim().length === 0) return parts.filter((c) => c.trim().length > 0);
  return parts;
}

/** "my girlfriend Ana and I live together": one clause, whose subject is both (not "my girlfriend Ana" and "I live …"). */
function mergeCompoundSubjects(sentence: string, clauses: string[]): string[] {
  if (clauses.length < 2) return clauses;
  const out: string[] = [];
  for (const clause of clauses) {
    const previous = out.at(-1);
    if (
      previous &&
      /^(?:my|our)(?:\s+[\p{L}'-]+){1,3}$/iu.test(previous.trim()) &&
      // "my name is Dana and I live in Porto" is two clauses: a subject has no verb of its own.
      !/\s(?:is|are|was|were|has|have|had|does|do)\b/i.test(previous) &&
      /^i\b/i.test(clause.trim()) &&
      sentence.includes(`${previous.trim()} and ${clause.trim()}`)
    ) {
      out[out.length - 1] = `${previous.trim()} and ${clause.trim()}`;
    } else out.push(clause);
  }
  return out;
}

/** Printable ASCII but the backtick: nothing normalise() would replace but runs of spaces. */
const PLAIN_ASCII = /^[\x20-\x5f\x61-\x7e]*$/;

function normalise(text: string): string {
  // Most turns are plain ASCII: four Unicode-aware replaces over them changed nothing (~2 µs a turn).
  if (PLAIN_ASCII.test(text) && !text.includes('  ')) return text.trim();
  return text
    .replace(/[’‘`´]/g, "'")
    .replace(/[“”„]/g, '"')
    .replace(/\p{Extended_Pictographic}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The last word of a phrase, the value a "no longer"/"not … anymore" names ("not at Google anymore" → Google). */
function lastWord(phrase: string): string | undefined {
  return phrase
    .replace(/\b(?:anymore|any more)\b/gi, '')
    .trim()
    .split(/\s+/)
    .at(-1)
    ?.replace(/[^\p{L}\p{N}'-]/gu, '');
}

/** What people put in front of a statement, and what each notes about it. */
const FRONTS = [
  [FILLER, undefined],
  [CORRECTING, 'correction'],
  [REMEMBER, 'remember'],
] as const;

/** Whether anything stripFront() takes off starts the text (a test allocates no match, most clauses have none). */
function hasFront(text: string): boolean {
  for (const [pattern] of FRONTS) if (pattern.test(text)) return true;
  return false;
}

function stripFront(clause: string): { text: string; correction: boolean; remember: boolean } {
  let text = clause;
  let correction = false;
  let remember = false;
  for (let changed = hasFront(text); changed; ) {
    changed = false;
    for (const [pattern, note] of FRONTS) {
      const m = text.match(pattern);
      if (m && m[0].length > 0 && m[0].length < text.length) {
        text = text.slice(m[0].length);
        if (note === 'correction') correction = true;
        if (note === 'remember') remember = true;
        changed = true;
      }
    }
  }
  return { text: text.trim(), correction, remember };
}

/**
 * Whether the clause is nothing but what goes in front of a statement ("Actually," or "Remember:" alone):
 * stripFront() of it with a word after it leaves only that word. A clause that no front pattern starts
 * cannot be (every pattern ends at a word boundary, and none takes the space and word added after it).
 */
function frontAlone(text: string): { correction: boolean; remember: boolean } | undefined {
  if (text.length > 0 && !hasFront(text)) return undefined;
  const alone = stripFront(`${text} x`);
  return alone.text === 'x' ? alone : undefined;
}

/** The value a correction names, cut from the statement's text where it only says what no longer holds. */
function corrections(text: string): { text: string; replaces: string[]; named: boolean } {
  const replaces: string[] = [];
  let out = text.replace(/[.!?]+$/, '');
  const not = out.match(NOT_TAIL);
  if (not?.[1] && not.index !== undefined && !AUX_BEFORE_NOT.test(out.slice(0, not.index).trim())) {
    replaces.push(not[1].trim());
    out = out.slice(0, not.index).replace(/[\s,]+(?:now)?$/i, (m) => (/now/i.test(m) ? ' now' : ''));
  }
  const instead = out.match(INSTEAD_TAIL);
  if (instead?.[1] && instead.index !== undefined) {
    replaces.push(instead[1].trim());
    out = out.slice(0, instead.index);
  }
  const fromTo = out.match(FROM_TO);
  if (fromTo?.[1]) replaces.push(fromTo[1].trim());
  const noLonger = out.match(NO_LONGER);
  const word = noLonger ? lastWord(out.slice(noLonger.index)) : undefined;
  if (word) replaces.push(word);
  return { text: out.trim(), replaces, named: replaces.length > 0 };
}

/**
 * Whether the model should judge the clause: every statement but a hypothetical, a request about this
 * answer, or small talk. People state facts without "I" ("data engineer at Spotify", "3 older sisters
 * lol"), so a first-person filter would lose them; what is left out here costs the model nothing.
 */
function isCandidate(text: string, remembered: boolean, correcting: boolean): boolean {
  if (remembered) return true;
  if (statesNothingOfTheUser(text)) return false;
  if (correcting) return true;
  if (HYPOTHETICAL.test(text)) return false;
  if (ABOUT_ANSWERS.test(text)) return !oneOffInstruction(text);
  if (REQUEST.test(text) || SMALL_TALK.test(text)) return false;
  return /\p{L}/u.test(text) && text.length >= 3;
}

/** The statements of a turn that may tell something lasting about the user, and what it asks to forget. */
export function statementsOf(turn: string): TurnStatements {
  const statements: Statement[] = [];
  const forget: string[] = [];
  // "Actually," or "Remember:" alone before the clause it is about.
  let carriedCorrection = false;
  let carriedRemember = false;
  // Each pattern below runs only on text that holds what it needs to match (a full stop, a sentence's end, a
  // question mark, a comma or a conjunction): the lookbehinds and Unicode classes cost ~1 µs a run even on a
  // short turn that has none, and the answers are the same. Loops rather than closures: this runs on every
  // chat request with memory on, and a turn that states nothing should cost next to no allocation.
  const normalised = normalise(turn);
  const protectedTurn = normalised.includes('.')
    ? normalised.replace(ABBREVIATION, (a) => a.replaceAll('.', STOP))
    : normalised;
  for (const said of MAY_END_SENTENCE.test(protectedTurn) ? protectedTurn.split(SENTENCES) : [protectedTurn]) {
    const untagged = said.includes('?') ? said.replace(TAG_QUESTION, '') : said;
    const sentence = untagged.includes(STOP) ? untagged.replaceAll(STOP, '.') : untagged;
    const asks = /\?\s*$/.test(sentence);
    const split = MAY_BREAK_CLAUSE.test(sentence) ? sentence.split(CLAUSE_BREAK) : [sentence];
    let clauses = mergeCompoundSubjects(sentence, withoutBlanks(split));
    const last = clauses.at(-1) ?? '';
    const cut = asks ? last.lastIndexOf(', ') : -1;
    if (cut > 0 && (clauses.length === 1 || QUESTION_AFTER.test(last.slice(cut + 2)))) {
      // "im vegan, dinner ideas?", "… and I use Excel a lot, so which colours should I use?": the question
      // is the part after the last comma.
      clauses = [...clauses.slice(0, -1), last.slice(0, cut), last.slice(cut + 2)];
    }
    // "sold it, I've got a Kia now", "quit bartending, I'm a tester now": a correction in one clause of a
    // sentence makes its other statements corrections too.
    const correcting = CORRECTION_WORDS.test(sentence);
    // "Roleplay: you are a doctor and I am a patient", "Imagine I'm a pirate and …": nothing in the sentence is the user's.
    const framed = HYPOTHETICAL.test(stripFront((clauses[0] ?? '').trim()).text);
    for (let i = 0; i < clauses.length; i++) {
      const raw = (clauses[i] as string).trim().replace(/^[,\s]+/, '');
      // "…, so no wine pairings please": what the user asks because of the fact, not a fact.
      if (i > 0 && /^so\s/i.test(raw)) continue;
      const stripped = stripFront(raw);
      const alone = frontAlone(stripped.text);
      if (alone) {
        carriedCorrection ||= alone.correction;
        carriedRemember ||= alone.remember;
        continue;
      }
      const text = stripped.text.replace(TRAILING_FILLER, '');
      const correction = stripped.correction || carriedCorrection;
      const remember = stripped.remember || carriedRemember;
      carriedCorrection = false;
      carriedRemember = false;
      const forgetting = text.match(FORGET);
      if (forgetting?.[1] && !remember) {
        forget.push(forgetting[1].replace(/[.!?]+$/, '').trim());
        continue;
      }
      if (forThisConversation(raw, text)) continue;
      // A question states nothing ("Is my code correct?"), except what it asks to remember; in a
      // sentence that ends with one, the clauses before the question are statements ("I'm vegetarian,
      // can you suggest a dinner?").
      const question = (asks && (i === clauses.length - 1 || QUESTION_START.test(text))) || BARE_QUESTION.test(text);
      if (question && !remember && !(ABOUT_ANSWERS.test(text) && LASTING.test(text))) continue;
      if (framed || !isCandidate(text, remember, correction)) continue;
      const cut = corrections(text);
      if (cut.text.length < 2 || cut.text.length > 300) continue;
      const corrects = correction || cut.named || correcting;
      statements.push({
        text: cut.text,
        raw,
        correction: corrects,
        changed: corrects || (CHANGE_WORDS.test(text) && !ADDITION_WORDS.test(text)),
        replaces: cut.replaces,
        remember,
      });
    }
  }
  return { statements, forget };
}

/** The request path's first look: could this turn state a fact (or ask to forget one)? */
export function mayState(turn: string): boolean {
  const { statements, forget } = statementsOf(turn);
  return statements.length > 0 || forget.length > 0;
}
