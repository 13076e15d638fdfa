// The dredd hooks' own requests to the contract server (dredd-hooks.cjs, docs/contract-testing.md), and what
// beforeAll learns through them: which capabilities the server has (`available`, filled by `probe`) and the real ids
// it creates (`ids`). One instance, shared through Node's module cache by the hooks and the modules they require:
// beforeAll fills it, every hook after it reads it.
// The server comes from test/contract/serve-for-contract.mjs: PVAI_URL, PVAI_API_KEY, PVAI_ADMIN_TOKEN.
const { PVAI_URL, PVAI_API_KEY, PVAI_ADMIN_TOKEN } = process.env;
if (!PVAI_URL || !PVAI_API_KEY || !PVAI_ADMIN_TOKEN) {
  throw new Error('dredd-hooks: PVAI_URL, PVAI_API_KEY and PVAI_ADMIN_TOKEN must be set (serve-for-contract.mjs)');
}

const available = {}; // capability → true, or the 503 body that says it is not available
const ids = {}; // real ids created in beforeAll

async function call(method, path, { body, auth = 'key', headers = {} } = {}) {
  const h = { Accept: 'application/json', ...headers };
  if (auth === 'key') h.Authorization = `Bearer ${PVAI_API_KEY}`;
  else if (auth === 'admin') h.Authorization = `Bearer ${PVAI_ADMIN_TOKEN}`;
  else if (auth) h.Authorization = `Bearer ${auth}`;
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const res = await fetch(`${PVAI_URL}${path}`, {
    method,
    headers: h,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

async function must(expectStatus, method, path, options) {
  const res = await call(method, path, options);
  if (res.status !== expectStatus) {
    throw new Error(
      `dredd-hooks setup: ${method} ${path} answered ${res.status}, expected ${expectStatus}: ${res.text}`,
    );
  }
  return res.json;
}

async function probe(capability, method, path, body) {
  const res = await call(method, path, { body, auth: capability === 'metrics' ? null : 'key' });
  if (res.status === 503) {
    available[capability] = res.json ?? res.text;
    console.log(
      `dredd-hooks: ${capability} is not available on this server (503 ${res.json?.code ?? ''}): ${res.text}`,
    );
  } else {
    available[capability] = true;
  }
  return res;
}

module.exports = { PVAI_API_KEY, PVAI_ADMIN_TOKEN, available, ids, must, probe };
