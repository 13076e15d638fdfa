import type { ChatMessage, ContentPart } from './types.js';

/**
 * What an image is counted as where a count is estimated (the prompt budget, an upstream that reports no usage):
 * OpenAI's count for `detail: low` (85), and otherwise for a 1024×1024 image at high detail (85 + 4 tiles × 170).
 * The image's size is unknown without fetching it, and vision models count differently (LLaVA-1.5 576 tokens,
 * Qwen2-VL by size), so this is a fair middle for a budget, never a charge: credits are per request.
 */
const IMAGE_TOKENS_LOW_DETAIL = 85;
const IMAGE_TOKENS = 765;

/** The text of a message's content: a string as is, the text parts of a list joined in order (an image has none). */
export function contentText(content: ChatMessage['content']): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) if (part.type === 'text') text += part.text;
  return text;
}

/** The estimated tokens of the images in a message's content (0 for text). */
export function imageTokens(content: ChatMessage['content']): number {
  if (content === null || typeof content === 'string') return 0;
  let tokens = 0;
  for (const part of content) if (part.type === 'image_url') tokens += tokensOfImage(part);
  return tokens;
}

function tokensOfImage(part: Extract<ContentPart, { type: 'image_url' }>): number {
  return part.image_url.detail === 'low' ? IMAGE_TOKENS_LOW_DETAIL : IMAGE_TOKENS;
}

/** Whether a message's content holds an image. */
export function hasImage(content: ChatMessage['content']): boolean {
  return imageAt(content) >= 0;
}

function imageAt(content: ChatMessage['content']): number {
  if (content === null || typeof content === 'string') return -1;
  return content.findIndex((part) => part.type === 'image_url');
}

/** Where the first image of a conversation is (`[message, part]`), or undefined for text alone. */
export function firstImage(messages: readonly ChatMessage[]): [number, number] | undefined {
  for (let i = 0; i < messages.length; i++) {
    const j = imageAt((messages[i] as ChatMessage).content);
    if (j >= 0) return [i, j];
  }
  return undefined;
}
