#!/usr/bin/env bash
# Property-based contract test of a running pvai server with schemathesis (see docs/contract-testing.md).
#
#   test/contract/schemathesis.sh bearer|x-api-key
#
# Needs PVAI_URL, PVAI_API_KEY and PVAI_ADMIN_TOKEN (test/contract/serve-for-contract.mjs sets them) and
# schemathesis (`st`, from .tools/venv by default; ST=/path/to/st to use another).
#
# It loads the contract the server itself serves (/openapi.json) and runs every check schemathesis has
# (`--checks all`): no 5xx (not_a_server_error), responses match their schemas, only documented status codes
# and content types, documented headers, invalid data refused, valid data accepted, missing auth refused, ...
# The API key goes in the way the first argument says (Authorization: Bearer, or X-API-Key), the admin token
# as the AdminToken scheme of the /admin operations: schemathesis applies each security scheme where the
# contract declares it. Nothing is excluded; test/contract/schemathesis_hooks.py drops one kind of report only,
# "schema-valid request rejected" for the documented 400s whose rule spans more than a schema can say (a
# tool_choice naming a function not in tools, a grant past the balance ceiling, embeddings' token ids, dimensions
# and window, and the others its text lists), and only when the request really breaks that rule. Time is bounded by --max-examples per operation and a request timeout (env:
# ST_MAX_EXAMPLES, default 50; ST_REQUEST_TIMEOUT, default 20 s).
# ST_UNICODE=1 makes it the Unicode edge-case run: every text field of every operation is drawn as usual or with
# edge cases put into it (NUL, controls, unpaired surrogates, zero-width and bidi characters, noncharacters, astral
# characters, ...; test/contract/schemathesis_unicode.py), and the same checks apply.
# ST_SEED (default 1) fixes the generated cases, so that a CI run fails or passes the same way every time and a
# failure reproduces; ST_SEED=random explores new cases (run it now and then, locally).
set -euo pipefail

scheme="${1:-bearer}"
: "${PVAI_URL:?PVAI_URL is not set (run this through test/contract/serve-for-contract.mjs)}"
: "${PVAI_API_KEY:?PVAI_API_KEY is not set}"
: "${PVAI_ADMIN_TOKEN:?PVAI_ADMIN_TOKEN is not set}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
st="${ST:-$root/.tools/venv/bin/st}"
max_examples="${ST_MAX_EXAMPLES:-50}"
request_timeout="${ST_REQUEST_TIMEOUT:-20}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
config="$work/schemathesis.toml"

# Secrets are read from the environment by schemathesis itself (${VAR}), so they never appear in a command line.
case "$scheme" in
  bearer)
    cat >"$config" <<'TOML'
[auth.openapi.BearerAuth]
bearer = "${PVAI_API_KEY}"
TOML
    ;;
  x-api-key)
    cat >"$config" <<'TOML'
[auth.openapi.ApiKeyHeader]
api_key = "${PVAI_API_KEY}"
TOML
    ;;
  *)
    echo "usage: $0 bearer|x-api-key" >&2
    exit 2
    ;;
esac
cat >>"$config" <<'TOML'

[auth.openapi.AdminToken]
bearer = "${PVAI_ADMIN_TOKEN}"

# Invalid data is rightly refused with 413 too: a body over the size limit is answered before it is read whole
# (1,001 chat messages of content parts pass 1 MiB before they pass maxItems). The rest is schemathesis's list.
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]
TOML

# not_a_server_error counts every 5xx, documented or not. Two documented 503s are answers, not errors:
#  - GET /z1/health/ready reports whether each dependency works and answers 503 `not_ready` when one does not;
#    what it says is checked (schema, status); whether the contract server is ready is dredd's business (it
#    expects 200 there).
#  - an operation whose engine is not on this server answers 503 SERVICE_UNAVAILABLE ("... not available on
#    this server ...", documented as such: a placeholder not built yet, or embeddings on a server without an
#    embedding model, as the contract server is unless started with --models setup). Each such capability is
#    probed here; only those that really answer so get 503 accepted, by tag, and the run says so. Every other
#    check still applies.
cat >>"$config" <<'TOML'

[[operations]]
include-operation-id = "getReadiness"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "503"]
TOML
"$root/.tools/venv/bin/python" - "$config" <<'PY'
import json, os, sys, urllib.error, urllib.request

config = sys.argv[1]
base, key = os.environ["PVAI_URL"], os.environ["PVAI_API_KEY"]
probes = [  # capability, how to select its operations, a request that reaches its engine (a JSON body: POST)
    ("memory", 'include-tag = "Memory"', "/z1/memory?user_id=schemathesis-probe", True, None),
    ("rag", 'include-tag = "RAG"', "/z1/rag/documents?user_id=schemathesis-probe", True, None),
    ("sla", 'include-tag = "SLA"', "/z1/sla", True, None),
    ("metrics", 'include-operation-id = "getMetrics"', "/metrics", False, None),
    ("embeddings", 'include-tag = "Embeddings"', "/z1/embeddings", True, {"model": "PV-EMBED", "input": "probe"}),
]
with open(config, "a") as out:
    for name, selector, path, auth, payload in probes:
        headers = {"Authorization": f"Bearer {key}"} if auth else {}
        data = None
        if payload is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(payload).encode()
        req = urllib.request.Request(base + path, data=data, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as res:
                status, body = res.status, res.read().decode()
        except urllib.error.HTTPError as err:
            status, body = err.code, err.read().decode()
        try:
            placeholder = status == 503 and json.loads(body).get("code") == "SERVICE_UNAVAILABLE" \
                and "not available on this server" in json.loads(body).get("message", "")
        except ValueError:
            placeholder = False
        if placeholder:
            print(f"NOTE: {name} is not available on this server (503 SERVICE_UNAVAILABLE): "
                  f"its 503 is accepted by not_a_server_error")
            out.write(f'\n[[operations]]\n{selector}\n'
                      f'checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "503"]\n')
PY

seed="${ST_SEED:-1}"
seed_args=()
if [[ "$seed" != random ]]; then seed_args=(--seed "$seed"); fi

export SCHEMATHESIS_HOOKS="$root/test/contract/schemathesis_hooks.py"
[[ "${ST_UNICODE:-}" == 1 ]] && SCHEMATHESIS_HOOKS="$root/test/contract/schemathesis_unicode.py"

run_st() {
  "$st" --config-file "$config" run "$PVAI_URL/openapi.json" \
    --checks all \
    --max-examples "$max_examples" \
    --request-timeout "$request_timeout" \
    --workers 1 \
    --generation-database none \
    --no-color \
    "${seed_args[@]}" \
    ${ST_EXTRA_ARGS:-} \
    "$@"
}

echo "schemathesis $("$st" --version | awk '{print $NF}') against $PVAI_URL (API key as $scheme, $max_examples examples per operation, seed $seed${ST_UNICODE:+, Unicode edge cases in every text field})"
cd "$work"
# Two passes over the same server: the account API first, the admin API last. The stateful phase chains
# operations through their responses (list accounts -> change a tier, list keys -> revoke or rotate a key), so
# fuzzing /admin can demote or lock out the very account whose key the /z1 operations are tested with; after
# that they would only see 429/401/403 and go untested.
status=0
echo "--- pass 1: every operation but the admin API"
run_st --exclude-tag Admin || status=1
echo "--- pass 2: the admin API"
run_st --include-tag Admin || status=1
exit "$status"
