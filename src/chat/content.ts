import { AppError } from '../errors/index.js';
import type { RequestBody } from '../http/index.js';
import type { ContentPart } from '../providers/index.js';

type Content = RequestBody<'createChatCompletion'>['messages'][number]['content'];
type BodyPart = Exclude<Content, string | null | undefined>[number];

/** What the routed model reads: text only, or images too (every target of its route declared `vision`). */
export interface ReadContentOptions {
  images: boolean;
}

function unsupported(field: string, type: string, why: string): AppError {
  return new AppError('UNSUPPORTED_CONTENT', `${field} is a part of type ${type}: ${why}`, {
    field,
    part_type: type,
  });
}

function required(field: string, where = ''): AppError {
  return new AppError('INVALID_PARAMETER', `${field} is required${where}`, { field, reason: 'is required' });
}

/** An `image_url` part as OpenAI defines it (`{type: image_url, image_url: {url, detail?}}`), in a user turn. */
function checkImagePart(part: BodyPart, field: string, role: string): void {
  if (role !== 'user') {
    throw unsupported(field, part.type, `an image is read in a user message only, not in a ${role} message`);
  }
  const image = (part as { image_url?: unknown }).image_url as { url?: unknown } | null | undefined;
  if (typeof image !== 'object' || image === null || typeof image.url !== 'string' || image.url === '') {
    throw required(`${field}.image_url.url`, ' in an image_url part');
  }
}

/**
 * A message's content as the pipeline reads it: a string as is; a list of parts whose `text` parts are joined
 * (OpenAI's own rendering of parts into a prompt), unless it holds an image and the route reads images: then the
 * list itself, its parts in order and as the client sent them. A part the routed model cannot read is refused
 * with the part and its type named (400 UNSUPPORTED_CONTENT).
 */
export function readContent(
  content: Content | undefined,
  field: string,
  role: string,
  options: ReadContentOptions,
): string | ContentPart[] | null {
  if (content === undefined || content === null) return null;
  if (typeof content === 'string') return content;
  let text = '';
  let image = false;
  for (const [i, part] of content.entries()) {
    const at = `${field}[${i}]`;
    if (part.type === 'image_url' && options.images) {
      checkImagePart(part, at, role);
      image = true;
      continue;
    }
    if (part.type !== 'text') {
      throw unsupported(
        at,
        part.type,
        options.images
          ? 'this model reads text and images only (text and image_url parts or a string)'
          : `the models here read text only (text parts or a string)${part.type === 'image_url' ? IMAGES_ELSEWHERE : ''}`,
      );
    }
    if (typeof part.text !== 'string') throw required(`${at}.text`, ' in a text part');
    text += part.text;
  }
  return image ? (content as ContentPart[]) : text;
}

/** Said where an image is refused: which models read images is public. */
const IMAGES_ELSEWHERE = ', except those with vision in their capabilities (GET /z1/models)';
