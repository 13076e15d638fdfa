/**
 * bench:memory's scripted conversations: each is one end user's sessions (separate chat requests, no
 * shared history), then a question whose answer depends on an earlier session. Phrasings vary,
 * corrections supersede earlier facts, distractor turns (questions, small talk, other people's facts)
 * sit between them, and the same user ids recur in a second account.
 */
export interface Conversation {
  userId: string;
  sessions: string[][];
  question: string;
  /** Text the retrieved memories must contain for a hit. */
  expect: string;
  /** Text they must not contain (a superseded fact). */
  reject?: string;
}

const NAMES = ['Ada', 'Bruno', 'Chiara', 'Dmitri', 'Elif', 'Farid', 'Greta', 'Hiro', 'Ines', 'Jonas'];
const CITIES = ['Lyon', 'Porto', 'Leeds', 'Graz', 'Turku', 'Bergen', 'Cork', 'Ghent', 'Brno', 'Split'];
const COMPANIES = ['Acme Robotics', 'Blue Harbor', 'Cobalt Labs', 'Delta Freight', 'Evergreen Bank'];
const ALLERGENS = ['peanuts', 'shellfish', 'penicillin', 'sesame', 'latex'];
const PETS = ['Rex', 'Miso', 'Pepper', 'Biscuit', 'Nala'];
const COLOURS = ['teal', 'crimson', 'ochre', 'lilac', 'olive'];
const HOBBIES = ['bouldering', 'birdwatching', 'pottery', 'sailing', 'chess'];
const DATES = ['June 3', 'March 14', 'October 9', 'May 21', 'December 1'];

const DISTRACTORS = [
  'What is the capital of Australia?',
  'Can you give me a quick pasta recipe?',
  'My colleague Tom lives in Madrid, he says it is hot.',
  'Tell me a joke about programmers.',
  'How do I convert Celsius to Fahrenheit?',
  'My sister is allergic to cats.',
  'Thanks, that was helpful!',
  'Summarise the plot of Hamlet in two sentences.',
];

const pick = <T>(list: readonly T[], i: number): T => list[i % list.length] as T;
const distractor = (i: number) => pick(DISTRACTORS, i);

type Maker = (i: number, userId: string) => Conversation;

const MAKERS: Maker[] = [
  (i, userId) => ({
    userId,
    sessions: [
      [`${pick(['My name is', 'Call me', "Hi, I'm called", 'You can call me'], i)} ${pick(NAMES, i)}.`],
      [distractor(i)],
    ],
    question: pick(['What is my name?', "What's my name again?", 'Do you remember my name?'], i),
    expect: pick(NAMES, i),
  }),
  (i, userId) => ({
    userId,
    sessions: [
      [`I live in ${pick(CITIES, i)}.`, distractor(i + 1)],
      [distractor(i + 2)],
      [`${pick(['Actually, I moved to', 'I recently moved to', 'I now live in'], i)} ${pick(CITIES, i + 5)}.`],
    ],
    question: pick(['Where do I live now?', 'Which city do I live in?', 'Where is my home these days?'], i),
    expect: pick(CITIES, i + 5),
    reject: pick(CITIES, i),
  }),
  (i, userId) => ({
    userId,
    sessions: [
      [
        pick(["I'm allergic to", 'I am allergic to', 'Just so you know, I am allergic to'], i) +
          ` ${pick(ALLERGENS, i)}.`,
      ],
      [distractor(i + 3)],
    ],
    question: pick(
      ['Am I allergic to anything?', 'What allergies do I have?', 'Is there something I am allergic to?'],
      i,
    ),
    expect: pick(ALLERGENS, i),
  }),
  (i, userId) => ({
    userId,
    sessions: [['I prefer metric units.'], [distractor(i + 4)], ['Actually I prefer imperial units now.']],
    question: pick(
      ['Which units do I prefer?', 'What units should you use for me?', 'Do I prefer metric or imperial units?'],
      i,
    ),
    expect: 'imperial',
    reject: 'metric units.',
  }),
  (i, userId) => ({
    userId,
    sessions: [
      [distractor(i + 5), `${pick(['I work at', 'I work for', 'These days I work at'], i)} ${pick(COMPANIES, i)}.`],
    ],
    question: pick(['Where do I work?', 'Which company do I work for?', 'Who is my employer?'], i),
    expect: pick(COMPANIES, i),
  }),
  (i, userId) => ({
    userId,
    sessions: [[`My dog's name is ${pick(PETS, i)}.`], [distractor(i + 6)]],
    question: pick(["What is my dog's name?", 'What is my dog called?', "Do you remember my dog's name?"], i),
    expect: pick(PETS, i),
  }),
  (i, userId) => ({
    userId,
    sessions: [[`Remember that my anniversary is on ${pick(DATES, i)}.`], [distractor(i + 7)]],
    question: pick(['When is my anniversary?', 'What date is my anniversary?', 'Remind me of my anniversary date.'], i),
    expect: pick(DATES, i),
  }),
  (i, userId) => ({
    userId,
    sessions: [
      [`My favourite colour is ${pick(COLOURS, i)}.`],
      [distractor(i)],
      [`My favourite colour is ${pick(COLOURS, i + 2)} now.`],
    ],
    question: pick(["What's my favourite colour?", 'Which colour do I like best?'], i),
    expect: pick(COLOURS, i + 2),
    reject: ` ${pick(COLOURS, i)}.`,
  }),
  (i, userId) => ({
    userId,
    sessions: [
      [`${pick(['I love', 'I really enjoy', 'I like'], i)} ${pick(HOBBIES, i)} on weekends.`],
      [distractor(i + 1)],
    ],
    question: pick(['What do I like doing on weekends?', 'What hobby do I enjoy on weekends?'], i),
    expect: pick(HOBBIES, i),
  }),
  (i, userId) => ({
    userId,
    sessions: [[pick(["I'm vegetarian.", 'I am vegetarian, by the way.'], i)], [distractor(i + 2)]],
    question: pick(['Am I vegetarian?', 'Do I eat meat, or am I vegetarian?'], i),
    expect: 'vegetarian',
  }),
];

/** `perKind` conversations of each of the ten kinds, each for its own user. */
export function conversations(perKind = 5): Conversation[] {
  const out: Conversation[] = [];
  for (let i = 0; i < perKind; i++) {
    MAKERS.forEach((make, kind) => {
      out.push(make(i, `user-${kind}-${i}`));
    });
  }
  return out;
}
