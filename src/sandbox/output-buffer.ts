/**
 * Collects the sandbox's combined output up to a byte cap. Bytes beyond the cap are read and dropped,
 * so a chatty program never blocks on a full pipe and never grows the service's memory.
 */
export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private storedBytes = 0;
  private truncated = false;

  constructor(private readonly limitBytes: number) {}

  append(chunk: Buffer): void {
    const room = this.limitBytes - this.storedBytes;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.storedBytes += kept.length;
  }

  /** The output as text, with a marker appended when some of it was dropped. */
  text(): string {
    const bytes = Buffer.concat(this.chunks, this.storedBytes);
    if (!this.truncated) return bytes.toString('utf8');
    // Cut at a character boundary so the marker is not preceded by a replacement character.
    const kept = bytes.subarray(0, utf8BoundaryAtOrBefore(bytes, bytes.length));
    return `${kept.toString('utf8')}\n[output truncated at ${this.limitBytes} bytes]`;
  }
}

/** The largest offset <= end that does not split a UTF-8 multi-byte sequence. */
export function utf8BoundaryAtOrBefore(bytes: Uint8Array, end: number): number {
  // Walk back over at most 3 continuation bytes (10xxxxxx) to the lead byte of the last character.
  let start = end;
  while (start > 0 && end - start < 4) {
    const byte = bytes[start - 1] ?? 0;
    if ((byte & 0xc0) !== 0x80) break;
    start -= 1;
  }
  if (start === 0) return end;
  const lead = bytes[start - 1] ?? 0;
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  const available = end - (start - 1);
  return available >= needed ? end : start - 1;
}
