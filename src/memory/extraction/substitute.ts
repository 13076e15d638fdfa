import { FRAGMENT } from './third-person.js';

const NUMBER = /^(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)$/i;

/**
 * What a memory says after a correction that names its old value. A full statement ("I live in Pärnu now,
 * not Tartu") replaces the memory's text; a bare correction ("scratch that, it's three kids not two") only
 * swaps the value in it: the memory "The user has two kids." becomes "The user has three kids.". The new
 * value is the correction's word that stands where the old one stood: before the word that follows the old
 * value in the memory ("kids"), else the correction's number for a number, its name for a name, its last word.
 */
export function substituted(memory: string, oldValue: string, fact: string): string {
  if (!fact.startsWith(FRAGMENT)) return fact;
  const said = fact.slice(FRAGMENT.length).replace(/[.!?]+$/, '');
  const words = said.split(/\s+/).map((w) => w.replace(/[^\p{L}\p{N}'-]/gu, ''));
  const escaped = oldValue.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const at = new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'iu');
  const after = memory.slice((memory.match(at)?.index ?? 0) + oldValue.length).match(/[\p{L}\p{N}'-]+/u)?.[0];
  const anchor = after ? words.findIndex((w) => w.toLowerCase() === after.toLowerCase()) : -1;
  let value: string | undefined;
  if (anchor > 0) value = words[anchor - 1];
  else if (NUMBER.test(oldValue)) value = words.find((w) => NUMBER.test(w));
  else if (/^\p{Lu}/u.test(oldValue)) value = said.match(/\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*)*/gu)?.at(-1);
  value ??= words.filter(Boolean).at(-1);
  return value ? memory.replace(at, value) : memory;
}
