// The Files and Vector Stores APIs in the dredd run (dredd-hooks.cjs, docs/contract-testing.md): the files, stores and
// batch beforeAll creates, the real ids a transaction of /z1/files… or /z1/vector_stores… needs, the multipart body
// of createFile (Dredd has no file to send: the hooks build the form), and what is provoked otherwise than the other
// operations' way. Every 2xx works on a fixture: a file (uploaded as multipart, as a client does) that retrieveFile
// and downloadFile read (its bytes compared), a file of its own for deleteFile; a store holding that file (with
// attributes) that the store's operations read, search and change, with a file of its own for deleteVectorStoreFile,
// and a batch that the batch operations read and cancel; a store of its own for deleteVectorStore; a file not yet in
// the store for createVectorStoreFile and one for createVectorStoreFileBatch (their bodies name it). The vector store
// in the path of a file or a batch is always the fixture store, so that their 400 and 404 concern the file or batch.
const { EXAMPLE_IDS, EXAMPLE_USER, MISSING_IDS } = require('./dredd-facts.cjs');
const { PVAI_API_KEY, ids, must } = require('./dredd-server.cjs');

const FIXTURE_TEXT =
  'The office opens at eight in the morning and closes at six.\nThe fixture handbook of the dredd run.\n';
const FREE_FILE_BYTES = 16 * 1024 * 1024; // the free tier's per-file cap (docs/decisions.md)
const KINDS = new Set(['file', 'vectorStore', 'batch']);

/** A multipart/form-data body of `fields` ({name, value, filename?, type?}): the text and its Content-Type. */
function multipart(fields) {
  const boundary = `dredd-${Math.random().toString(16).slice(2)}`;
  const parts = fields.map(({ name, value, filename, type }) => {
    const disposition = `form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}`;
    return `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type ? `Content-Type: ${type}\r\n` : ''}\r\n${value}\r\n`;
  });
  return { body: `${parts.join('')}--${boundary}--\r\n`, type: `multipart/form-data; boundary=${boundary}` };
}

function uploadForm(text, { name = 'dredd-upload.txt', type = 'text/plain', purpose = 'assistants', user } = {}) {
  const fields = [
    { name: 'purpose', value: purpose },
    ...(user ? [{ name: 'user_id', value: user }] : []),
    { name: 'file', value: text, filename: name, type },
  ];
  return multipart(fields);
}

/** A file uploaded as a client uploads it (multipart, through fetch): its id. */
async function upload(text, name) {
  const form = new FormData();
  form.append('purpose', 'assistants');
  form.append('file', new Blob([text], { type: 'text/plain' }), name);
  const res = await fetch(`${process.env.PVAI_URL}/z1/files`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${PVAI_API_KEY}` },
    body: form,
  });
  const answer = await res.text();
  if (res.status !== 200) throw new Error(`dredd-hooks setup: POST /z1/files answered ${res.status}: ${answer}`);
  return JSON.parse(answer).id;
}

/** beforeAll: the fixture files, stores and batch (see the top of this file). */
async function createFixtureVectorStores() {
  ids.file = await upload(FIXTURE_TEXT, 'dredd-handbook.txt');
  ids.deleteFile = await upload('A file that deleteFile deletes.\n', 'dredd-delete.txt');
  ids.attachFile = await upload('A file that createVectorStoreFile attaches.\n', 'dredd-attach.txt');
  ids.batchFile = await upload('A file that createVectorStoreFileBatch attaches.\n', 'dredd-batch.txt');
  const detach = await upload('A file that deleteVectorStoreFile removes from the store.\n', 'dredd-detach.txt');
  const inBatch = await upload('A file of the fixture batch.\n', 'dredd-fixture-batch.txt');
  ids.vectorStore = (await must(200, 'POST', '/z1/vector_stores', { body: { name: 'Dredd fixture' } })).id;
  const files = `/z1/vector_stores/${ids.vectorStore}/files`;
  await must(200, 'POST', files, { body: { file_id: ids.file, attributes: { year: 2026 } } });
  ids.detachFile = (await must(200, 'POST', files, { body: { file_id: detach } })).id;
  ids.batch = (
    await must(200, 'POST', `/z1/vector_stores/${ids.vectorStore}/file_batches`, { body: { file_ids: [inBatch] } })
  ).id;
  ids.deleteVectorStore = (await must(200, 'POST', '/z1/vector_stores', { body: { name: 'Dredd delete' } })).id;
  // A free account of its own for createFile's 413 (the free tier's per-file cap): the other free account's 10
  // requests a minute are the 402s' and 403s'.
  const tag = Math.random().toString(36).slice(2, 10);
  ids.uploadFreeKey = (
    await must(201, 'POST', '/admin/accounts', {
      auth: 'admin',
      body: { email: `dredd-free-upload-${tag}@example.com`, tier: 'free', credits: 0 },
    })
  ).api_key;
}

/** idKind's answer for the Files and Vector Stores paths (a batch or a file before the store that holds it). */
function vectorStoreKind(resource) {
  if (resource.includes('{batch_id}')) return 'batch';
  if (resource.includes('{file_id}')) return 'file';
  if (resource.includes('{vector_store_id}')) return 'vectorStore';
  return null;
}

/** The real id of `kind` (file, vectorStore, batch) for a 2xx transaction of `resource`, or undefined. */
function vectorStoreIdOf(kind, resource, method) {
  if (!KINDS.has(kind)) return undefined;
  const deletes = method === 'DELETE';
  if (kind === 'batch') return ids.batch;
  if (kind === 'vectorStore')
    return deletes && resource === '/z1/vector_stores/{vector_store_id}' ? ids.deleteVectorStore : ids.vectorStore;
  if (resource.startsWith('/z1/vector_stores/')) return deletes ? ids.detachFile : ids.file;
  return deletes ? ids.deleteFile : ids.file;
}

/** The path of a file or a batch of a store names the fixture store, whatever the transaction does with the rest. */
function placeVectorStore(t, kind) {
  if (kind !== 'file' && kind !== 'batch') return;
  t.fullPath = t.fullPath.replace(EXAMPLE_IDS.vectorStore, ids.vectorStore);
  t.request.uri = t.fullPath;
}

function setHeader(t, name, value) {
  for (const h of Object.keys(t.request.headers))
    if (h.toLowerCase() === name.toLowerCase()) delete t.request.headers[h];
  t.request.headers[name] = value;
}

function setForm(t, form) {
  t.request.body = form.body;
  setHeader(t, 'Content-Type', form.type);
}

function setListQuery(t, name, value) {
  const url = new URL(t.fullPath, 'http://x');
  url.searchParams.set(name, value);
  t.fullPath = url.pathname + url.search;
  t.request.uri = t.fullPath;
}

/**
 * beforeEach of a Files or Vector Stores transaction, after the ids are placed: its body (createFile's form, the real
 * file ids in the bodies that attach one) and the statuses provoked otherwise than the other operations' way. True
 * when the transaction is ready (dredd-hooks.cjs returns), false when the common handling goes on.
 */
function vectorStoreTransaction(t, status) {
  const resource = t.origin.resourceName;
  const op = `${t.request.method} ${resource}`;
  if (op === 'POST /z1/files') {
    setForm(t, uploadForm(FIXTURE_TEXT));
    if (status === 400) {
      setForm(t, uploadForm(FIXTURE_TEXT, { purpose: 'fine-tune' }));
      t.expectedCode = 'INVALID_PARAMETER';
    } else if (status === 403) {
      // A key bound to one end user naming another in the form's user_id.
      setForm(t, uploadForm(FIXTURE_TEXT, { user: EXAMPLE_USER }));
      t.request.headers.Authorization = `Bearer ${ids.boundKey}`;
      t.expectedCode = 'END_USER_NOT_ALLOWED';
    } else if (status === 413) {
      // Over the free tier's per-file size (the body limit is the largest tier's).
      setForm(t, uploadForm('x'.repeat(FREE_FILE_BYTES + 1)));
      t.request.headers.Authorization = `Bearer ${ids.uploadFreeKey}`;
      t.expectedCode = 'PAYLOAD_TOO_LARGE';
    } else if (status === 415) {
      // A format documents are not (an image): refused for what the bytes are.
      setForm(
        t,
        uploadForm('GIF89a\u0001\u0000\u0001\u0000\u0000\u0000\u0000;', { name: 'pixel.gif', type: 'image/gif' }),
      );
      t.expectedCode = 'UNSUPPORTED_MEDIA_TYPE';
    } else return false; // 200, 401, 408, 503: the common way, with this form
    return true;
  }
  if (op === 'POST /z1/vector_stores/{vector_store_id}/files') {
    t.request.body = JSON.stringify({ ...JSON.parse(t.request.body), file_id: ids.attachFile });
  }
  if (op === 'POST /z1/vector_stores/{vector_store_id}/file_batches') {
    t.request.body = JSON.stringify({ ...JSON.parse(t.request.body), file_ids: [ids.batchFile] });
  }
  const list = { 'GET /z1/files': 'file', 'GET /z1/vector_stores': 'vectorStore' }[op];
  if (list && status === 400) {
    setListQuery(t, 'limit', '0');
    t.expectedCode = 'INVALID_PARAMETER';
    return true;
  }
  if (list && status === 404) {
    // A page after an object that does not exist (another account's is the same 404).
    setListQuery(t, 'after', MISSING_IDS[list]);
    t.expectedCode = 'NOT_FOUND';
    return true;
  }
  if (op === 'POST /z1/vector_stores' && status === 404) {
    t.request.body = JSON.stringify({ ...JSON.parse(t.request.body), file_ids: [MISSING_IDS.file] });
    t.expectedCode = 'NOT_FOUND';
    return true;
  }
  return false;
}

/** beforeEachValidation: what is wrong with a Files or Vector Stores 2xx answer beyond its schema, or undefined. */
function checkVectorStoreAnswer(t) {
  const resource = t.origin.resourceName;
  if (Number(t.real.statusCode) !== 200) return undefined;
  if (resource === '/z1/files/{file_id}/content') {
    // The bytes as uploaded; Dredd has no example of them to compare.
    const same = t.real.body === FIXTURE_TEXT;
    t.expected.body = t.real.body;
    return same
      ? undefined
      : `downloadFile answered ${JSON.stringify(t.real.body.slice(0, 80))}, not the bytes uploaded`;
  }
  if (resource === '/z1/vector_stores/{vector_store_id}/file_batches/{batch_id}/cancel') {
    // The fixture batch, its file already in: answered as it ended (completed), or cancelled.
    const batch = JSON.parse(t.real.body);
    const ended = batch.id === ids.batch && ['completed', 'cancelled'].includes(batch.status);
    return ended ? undefined : `cancel answered ${batch.id} ${batch.status}, not ${ids.batch} completed or cancelled`;
  }
  if (resource === '/z1/vector_stores/{vector_store_id}/files/{file_id}/content') {
    const text = (JSON.parse(t.real.body).data ?? []).map((part) => part.text).join('');
    return text?.includes('The office opens at eight') ? undefined : `the file's text is ${JSON.stringify(text)}`;
  }
  return undefined;
}

module.exports = {
  createFixtureVectorStores,
  vectorStoreKind,
  vectorStoreIdOf,
  placeVectorStore,
  vectorStoreTransaction,
  checkVectorStoreAnswer,
};
