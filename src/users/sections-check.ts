import { loadContract } from '../http/index.js';

/**
 * The sections of the contract's `UserExport` (its array properties) that no capability registers: an end user's
 * data the export would leave out and the erase would keep. The start stops on any.
 */
export function unregisteredSections(registered: readonly string[]): string[] {
  const schemas = (loadContract().parse() as { components: { schemas: Record<string, Schema> } }).components.schemas;
  const properties = schemas.UserExport?.properties ?? {};
  const sections = Object.entries(properties).filter(([, p]) => p.type === 'array');
  return sections.map(([name]) => name).filter((name) => !registered.includes(name));
}

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
}
