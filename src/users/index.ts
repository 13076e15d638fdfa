/**
 * An end user's data, in one call each: the export of everything the account holds about one of its end users,
 * and its erase. The data is the capabilities' (memory, documents, usage): each registers its section
 * (`UserDataSection`) as its descriptor's `userData`, as context sources give chat theirs.
 */

export { tableActivity } from './activity.js';
export { usersCapability } from './capability.js';
export type { EndUserPage, EndUserQuery, EndUserSummary } from './end-users.js';
export { paged } from './paged.js';
export type {
  Erased,
  SectionItem,
  UserDataSection,
  UserExport,
} from './types.js';
