import { AppError } from '../../errors/index.js';
import type { Tenant } from '../../retrieval/index.js';
import {
  type DashboardMiddleware,
  type DashboardRouter,
  formOf,
  signedIn,
  UPLOAD_ROUTE,
  uploadOf,
} from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { endUserIdOf, requiredEndUserIdOf } from '../end-user-id.js';
import { documentsPage } from '../pages.js';
import { DASHBOARD_PATH, seeOther, send } from '../web.js';

/**
 * Whether the account holds anything of the end user (a request, a document, a memory). Without the list of
 * end users (no UserDataService) every id counts as known, as before it.
 */
export async function isKnownEndUser(users: DashboardDeps['users'], tenant: Tenant): Promise<boolean> {
  return !users || (await users.find(tenant)) !== undefined;
}

/**
 * The POST that deletes one of an end user's items (a document, a memory) by its id in the path: the user
 * from the form, scoped to the signed-in account; then back to that user's page (`page`) with `notice=1`.
 * Without the store, or without a user, it is the same 404 as an id that is not theirs.
 */
export function deleteOfEndUser(
  store: { delete(tenant: Tenant, id: string): Promise<void> } | undefined,
  missing: string,
  page: 'documents' | 'memory',
  notice: 'deleted' | 'forgot',
): DashboardMiddleware {
  return async (ctx) => {
    const userId = requiredEndUserIdOf(formOf(ctx).get('user'), missing);
    if (!store) throw new AppError('NOT_FOUND', missing);
    await store.delete({ accountId: signedIn(ctx).account.id, userId }, String(ctx.params.id));
    seeOther(ctx, `${DASHBOARD_PATH}/${page}?user=${encodeURIComponent(userId)}&${notice}=1`);
  };
}

/**
 * Documents per end user (the account's own: every DocumentService call is scoped to the account). An id the
 * account holds nothing of is a 404 page saying so, with nothing to delete, export or erase.
 */
export function documentsRoutes(
  router: DashboardRouter,
  deps: Pick<DashboardDeps, 'documents' | 'documentUpload' | 'users'>,
): void {
  router.get('/documents', async (ctx) => {
    const signed = signedIn(ctx);
    const userId = endUserIdOf(ctx.query.user) ?? '';
    const tenant = { accountId: signed.account.id, userId };
    const known = userId !== '' && (await isKnownEndUser(deps.users, tenant));
    const documents = known && deps.documents ? await deps.documents.list(tenant) : undefined;
    const notice =
      ctx.query.deleted === '1' ? 'Document deleted.' : ctx.query.uploaded === '1' ? 'Document uploaded.' : undefined;
    send(
      ctx,
      userId && !known ? 404 : 200,
      documentsPage({
        session: signed.page,
        userId,
        documents,
        known,
        userData: deps.users !== undefined,
        upload: deps.documentUpload !== undefined,
        ...(notice ? { notice } : {}),
      }),
    );
  });

  // Post/Redirect/Get: the upload answers 303 to the user's page, so a reload does not upload it again.
  router.post(UPLOAD_ROUTE, '/documents/upload', async (ctx) => {
    const signed = signedIn(ctx);
    const form = formOf(ctx);
    const userId = requiredEndUserIdOf(form.get('user'), 'Choose an end user first');
    const file = uploadOf(ctx)?.file;
    if (!deps.documentUpload) throw new AppError('NOT_FOUND', 'Documents are not available on this server');
    if (!file || file.data.length === 0) {
      throw new AppError('INVALID_PARAMETER', 'Choose a file to upload (txt, md, html, pdf or docx)', {
        field: 'file',
      });
    }
    const title = (form.get('title') ?? '').trim() || undefined;
    if (title !== undefined && title.length > 512) {
      throw new AppError('INVALID_PARAMETER', 'A title is at most 512 characters', { field: 'title' });
    }
    await deps.documentUpload({ accountId: signed.account.id, userId }, file, { title });
    seeOther(ctx, `${DASHBOARD_PATH}/documents?user=${encodeURIComponent(userId)}&uploaded=1`);
  });

  router.post('/documents/:id/delete', deleteOfEndUser(deps.documents, 'No such document', 'documents', 'deleted'));
}
