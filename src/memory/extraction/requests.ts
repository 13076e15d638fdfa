/**
 * Clauses that state nothing lasting about the user whatever the model would make of them: what the user
 * asks of the assistant (with "me" as its object: "Cache me …", "Teach me …", "Walk me through …"; or about
 * the request itself: "My question is about recursion", "Next question: …"), one-off instructions ("answer
 * this one in French"), what the assistant is told it is ("you are a doctor"), and statements whose subject
 * is someone else ("He works at Amazon"). The world's facts ("Python is a popular language") are left to the
 * model: a rule cannot tell them from the user's family ("Emil is 4 now"). A memory write makes a
 * user's cached answers stale, so a request taken for a fact costs a cache miss as well as a false memory.
 */

/** A verb with "me"/"us" as its object, the assistant its subject: an imperative, not a statement. */
const ASKS_OF_ASSISTANT = /^(?:please\s+)?(?:just\s+)?(?!call\b|address\b)[\p{Ll}]+\s+(?:me|us)\b(?!\s+(?:as|by)\b)/iu;
/** "call me Jo", "talk to me in Spanish": how to address the user, which lasts. */
const ADDRESSING = /^(?:please\s+)?(?:call|address|talk to|speak to|write to)\s+(?:me|us)\b/i;
/** The request itself as the subject: "My question is about …", "Next question: …", "Quick q about …". */
const ABOUT_THE_REQUEST =
  /^(?:(?:my|our|the|this|one|a|another)\s+)?(?:(?:next|first|last|other|follow[- ]up|main|quick|real|actual|only|last|more|final|little|new|second)\s+)*(?:question|q|query|request|problem|issue|task|prompt|ask|message|doubt|topic|bug|error|code|script|function|essay|homework|assignment|draft|sentence|paragraph|snippet|point|follow[- ]up)s?\b(?!')/i;
/** "Topic: …", "Re: …", "Subject: …". */
const HEADING = /^(?:topic|re|subject|question|q|context|task)\s*:/i;
/** Bounded to this answer: an instruction that does not last ("answer this one in French", "use a table for this"). */
const ONE_OFF =
  /\b(?:this one|this time|for this(?:\s+(?:one|question|answer|reply|task|request|message|time))?|just this once|for now|in this (?:answer|reply|response|chat|conversation))\b/i;
const LASTING =
  /\b(?:from now on|from here on|going forward|in (?:the )?future|always|every time|whenever|by default|never)\b/i;
/** The assistant told what it is ("you are a doctor", "you're my tutor"): a role for this conversation. */
const ASSISTANT_ROLE = /^(?:now\s+)?(?:you are|you're|youre|ur|you will be|you'll be|act as|behave as|be my)\b/i;
/** Someone else as the subject. */
const THIRD_PARTY = /^(?:he|she|they|he's|she's|they're|his|her|their|hes|shes|theyre)\b/i;
const FIRST_PERSON =
  /(?<![\p{L}'])(?:i|i'm|im|i've|ive|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)(?![\p{L}'])/iu;
/**
 * A group or everyone as the subject ("Dogs are loyal animals", "Most nurses work long shifts", "People with
 * diabetes should …", "Everyone needs sleep"): a bare plural, or a quantifier, then a verb that agrees with a
 * plural. A name is singular ("Emil is 4 now") and the user's family is possessed ("my sister is …"), so
 * neither is one; a clause with the user in it anywhere ("Cats are my favourite") is left to the model.
 */
const GENERIC_SUBJECT = new RegExp(
  String.raw`^(?:(?:most|many|some|all|few|lots of|a lot of|plenty of|no|other|these|those)\s+)?` +
    // Up to three words before the head ("Colorblind people", "Japanese trains", "Kids these days").
    // No determiner: "Keep your answers short" is an imperative, "the kids are …" someone's in particular.
    String.raw`(?:(?!(?:the|a|an|your|his|her|their|its|this|that|these|those|as|can|could|would|will|do|does|please|keep|make|give|use)\b)[\p{L}-]+\s+){0,3}?` +
    // A plural noun, not a word that ends in -s ("always", "was", "this") nor a time ("Weekends are for …": the user's).
    String.raw`(?:people|children|kids|men|women|folks|adults|teens|(?!(?:always|sometimes|perhaps|was|has|does|this|its|his|hers|ours|yours|theirs|yes|lots|plus|thus|besides|towards|unless|whereas|weekends|weekdays|mornings|evenings|nights|afternoons|days|weeks|months|years|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|holidays|summers|winters)\b)[\p{L}-]{2,}s(?<![su]s|is|'s))` +
    // "in Finland", "with diabetes", "these days": what may stand between the subject and its verb.
    String.raw`(?:\s+(?:in|with|from|of|on|at|who \w+)\s+[\p{L}-]+(?:\s+[\p{L}-]+)?|\s+these days|\s+nowadays)?` +
    String.raw`(?:\s+(?:often|usually|always|generally|typically|mostly|rarely|never|also|really|tend to|still))?` +
    // The verb agrees with a plural: no -s ("Nurses work", "Most dentists recommend", "Dogs are").
    String.raw`\s+(?!(?:and|or|but|nor|of|in|on|with|from|at|to|the|a|an|for|by|please|pls|lol|too|either|ever|here|there|now|today)\b)[\p{L}']+(?<!s)\b` +
    // "Kids are 5 and 7": a count or an age is someone's in particular, not a group's.
    String.raw`(?!\s+\d+(?:\s*(?:and|&|,)\s*\d+)*\s*(?:years?\b|yo\b|months?\b|[.!,]|$))`,
  'iu',
);
const EVERYONE = /^(?:everyone|everybody|nobody|no one|anyone|anybody|people|most people)\b/i;
/**
 * Someone else's words ("Our teacher said the test is on Monday", "My boss told us …", "Apparently …",
 * "According to the news, …", "I heard that …"): the user's fact only when what is reported is about the user
 * ("My doctor said I'm prediabetic").
 */
const REPORTED =
  /^(?:apparently|according to [^,]{1,40},|(?:i|we)\s+(?:heard|read|saw)\b|(?!(?:i|we|i'm|im)\b)(?:[\p{L}'-]+\s+){0,4}?(?:said|says|told|tells|mentioned|mentions|claims?|claimed|reckons?|thinks|thought|believes?|insists?|insisted|explained|warned|wrote|reported|announced)\b)(?:\s+(?:me|us|everyone|them|him|her))?(?:\s+that)?\s+(\S+\s+\S+\s+\S.*)$/iu;
/**
 * Bounded to this conversation ("Save this list for later in this chat", "for now", "for the rest of this
 * session"): held by the conversation itself, not a lasting memory, even when asked to be remembered.
 */
const CONVERSATION_SCOPE =
  /\b(?:for now|for the moment|for (?:this|the current) (?:chat|conversation|session|thread)|for the rest of (?:this|the|our) (?:chat|conversation|session|thread)|for the next (?:few |couple of )?(?:messages|turns|questions|replies)|(?:later )?in this (?:chat|conversation|session|thread)|this session|until (?:the end of|we finish) (?:this|the|our) (?:chat|conversation|session))\b/i;
/** Material of the conversation to hold ("Remember this paragraph", "Store this snippet"): not a fact about the user. */
const HOLD_MATERIAL =
  /^(?:please\s+)?(?:remember|save|store|keep|hold on to|hold onto|note|memori[sz]e)\s+(?:this|these|the following|the)\s+(?:[\p{L}-]+\s+)?(?:snippet|code|list|text|table|paragraph|numbers?|file|data|message|output|function|script|essay|draft|document|link|url|values?|config|json|csv|passage|quote|query|example|results?)s?\b/iu;

/** The clause asks something of the assistant, or states nothing of the user's own: never a memory. */
export function statesNothingOfTheUser(text: string): boolean {
  if (HEADING.test(text) || ABOUT_THE_REQUEST.test(text)) return true;
  if (ASKS_OF_ASSISTANT.test(text) && !ADDRESSING.test(text) && !LASTING.test(text)) return true;
  if (ASSISTANT_ROLE.test(text) && !LASTING.test(text)) return true;
  if (THIRD_PARTY.test(text)) return true;
  return aboutOthersOrTheWorld(text);
}

/** A group or the world as the subject, or someone else's words about something not the user's. */
function aboutOthersOrTheWorld(text: string): boolean {
  if (!FIRST_PERSON.test(text) && (GENERIC_SUBJECT.test(text) || EVERYONE.test(text))) return true;
  const reported = text.match(REPORTED);
  return reported?.[1] !== undefined && !FIRST_PERSON.test(reported[1]);
}

/** The user as the clause's subject: "I live in Porto for now" is a fact, however long it holds. */
const USER_SUBJECT = /^(?:i|i'm|im|i am|i've|ive|we|we're|we've|my|our)\b/i;

/**
 * A request that holds for this conversation only, or asks to hold its material: not a memory even when
 * asked to be remembered ("Save this list for later in this chat", "For now, use Celsius"). `raw` is the
 * clause as written, `text` with what goes in front of it ("remember that", "btw") taken off.
 */
export function forThisConversation(raw: string, text: string): boolean {
  if (HOLD_MATERIAL.test(raw)) return true;
  return CONVERSATION_SCOPE.test(raw) && !LASTING.test(raw) && !USER_SUBJECT.test(text);
}

/** An instruction bounded to this answer ("answer this one in French"), not one that holds for later turns. */
export function oneOffInstruction(text: string): boolean {
  return ONE_OFF.test(text) && !LASTING.test(text);
}
