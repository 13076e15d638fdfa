import type { Clock } from '../clock/index.js';
import { userOperations } from './operations.js';
import { unregisteredSections } from './sections-check.js';
import type { SectionName, UserDataSection } from './types.js';
import { UserDataService } from './user-data-service.js';

/**
 * An end user's data in one call each: the export and the erase over every capability's section (`userData`),
 * read when asked. Its start checks that each section of the contract's export has its capability.
 */
export function usersCapability(deps: { sections: () => readonly UserDataSection<SectionName>[]; clock: Clock }) {
  const service = new UserDataService(deps.sections, deps.clock);
  return {
    name: 'users',
    service,
    operations: userOperations(service),
    start: async () => {
      const missing = unregisteredSections(deps.sections().map((s) => s.name));
      if (missing.length > 0) throw new Error(`no capability registers the export's section(s): ${missing.join(', ')}`);
    },
  };
}
