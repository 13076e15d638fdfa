import { AppError } from '../errors/index.js';
import { type ChatMessage, type ContentPart, firstImage } from '../providers/index.js';

/** Content parts read as text. */
const TEXT_PARTS = new Set(['input_text', 'output_text', 'text']);

interface InputPart {
  type: string;
  text?: unknown;
  refusal?: unknown;
  image_url?: unknown;
  file_id?: unknown;
  detail?: unknown;
}

/** How a content is read: what the routed model reads, and where the content is. */
export interface ContentReading {
  /** The route reads images (every target declared `vision`): a user message's `input_image` parts are kept. */
  images: boolean;
  /** The message's role; none for a function's output. Images are read in a user message only. */
  role?: string | undefined;
}

/** Said where an image is refused for a text-only route: which models read images is public. */
const IMAGES_ELSEWHERE = ', except those with vision in their capabilities (GET /z1/models)';

function unsupported(field: string, type: string, why: string): AppError {
  return new AppError('UNSUPPORTED_CONTENT', `${field} is a part of type ${type}: ${why}`, { field, part_type: type });
}

function required(field: string): AppError {
  return new AppError('INVALID_PARAMETER', `${field} is required`, { field, reason: 'is required' });
}

/**
 * A message's content for chat: a string, or its text parts joined (OpenAI's own rendering); when it holds an image
 * and the route reads images, its parts in order instead (`input_text` as chat's `text`, `input_image` as chat's
 * `image_url` with its `detail`). Any other part is refused naming it (400 UNSUPPORTED_CONTENT).
 */
export function contentOf(content: unknown, field: string, reading: ContentReading): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw required(field);
  let text = '';
  let image = false;
  // Made only where images may be kept: a text-only read allocates no parts.
  const parts: ContentPart[] | undefined = reading.images ? [] : undefined;
  for (const [i, part] of (content as InputPart[]).entries()) {
    const at = `${field}[${i}]`;
    if (part.type === 'input_image' && parts) {
      parts.push(imagePart(part, at, reading.role));
      image = true;
      continue;
    }
    const piece = textPiece(part, at, reading.images);
    text += piece;
    parts?.push({ type: 'text', text: piece });
  }
  return image && parts ? parts : text;
}

/** What a function's output carries, as text: a string or its text parts (an image is refused, as any other part). */
export function textOf(content: unknown, field: string, images: boolean): string {
  return contentOf(content, field, { images }) as string;
}

function textPiece(part: InputPart, field: string, images: boolean): string {
  if (part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
  if (!TEXT_PARTS.has(part.type)) {
    const why = images
      ? 'this model reads text and images only (input_text and input_image parts or a string)'
      : `the models here read text only (input_text parts or a string)${part.type === 'input_image' ? IMAGES_ELSEWHERE : ''}`;
    throw unsupported(field, part.type, why);
  }
  if (typeof part.text !== 'string') throw required(`${field}.text`);
  return part.text;
}

/** An `input_image` part as chat's `image_url` part: `{url, detail}` from `image_url` and `detail`. */
function imagePart(part: InputPart, field: string, role: string | undefined): ContentPart {
  if (role !== 'user') {
    const where = role === undefined ? "a function's output" : `a ${role} message`;
    throw unsupported(field, part.type, `an image is read in a user message only, not in ${where}`);
  }
  const url = part.image_url;
  if (typeof url !== 'string' || url === '') {
    if (typeof part.file_id === 'string') {
      throw new AppError(
        'UNSUPPORTED_CONTENT',
        `${field} names its image by file_id, and pvai has no files API: give image_url (an https URL or a data: URL)`,
        { field, part_type: part.type },
      );
    }
    throw required(`${field}.image_url`);
  }
  return { type: 'image_url', image_url: typeof part.detail === 'string' ? { url, detail: part.detail } : { url } };
}

/**
 * A conversation carried on (a previous response's) onto a route that reads text only must hold no image: an
 * earlier turn on a model that reads images may have left one. 400 UNSUPPORTED_CONTENT naming `field`.
 */
export function refuseImagesIn(history: readonly ChatMessage[], images: boolean, field: string, model: string): void {
  if (images || !firstImage(history)) return;
  throw new AppError(
    'UNSUPPORTED_CONTENT',
    `${field} continues a conversation that holds an image, and ${model} reads text only: continue it on a model with vision in its capabilities (GET /z1/models)`,
    { field, part_type: 'input_image' },
  );
}
