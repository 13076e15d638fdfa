type Env = Record<string, string | undefined>;

/** One environment variable of a config section: the field it sets, how its text reads, and what it must be. */
export interface SectionVariable {
  field: string;
  /** What the text must be, for the refusal ("a whole number"). */
  expected: string;
  /** The field's value, or undefined when the text is not one. */
  read(text: string): unknown;
}

/**
 * A config section's environment variables over the file's object for it: each variable that is set (not blank)
 * replaces its field; a value that does not read names its variable and what it must be. Undefined when neither
 * the file nor any variable says anything, so the section's defaults apply.
 */
export function sectionFromEnv(
  env: Env,
  file: unknown,
  variables: Readonly<Record<string, SectionVariable>>,
  fail: (message: string) => Error,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = file && typeof file === 'object' ? { ...(file as object) } : {};
  let any = file !== undefined;
  for (const [variable, { field, expected, read }] of Object.entries(variables)) {
    const text = env[variable]?.trim();
    if (!text) continue;
    const value = read(text);
    if (value === undefined) throw fail(`${variable}: must be ${expected}, got "${text}"`);
    out[field] = value;
    any = true;
  }
  return any ? out : undefined;
}

/** A variable read as a number whose text matches `pattern`. */
export function numberVariable(field: string, pattern: RegExp, expected: string): SectionVariable {
  return { field, expected, read: (text) => (pattern.test(text) ? Number(text) : undefined) };
}
