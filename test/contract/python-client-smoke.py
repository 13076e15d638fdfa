#!/usr/bin/env python3
"""Smoke test of the Python client generated from openapi/openapi.yaml against a running pvai server.

    node scripts/generate.mjs --python DIR && pip install DIR
    python test/contract/python-client-smoke.py     # with PVAI_URL, PVAI_API_KEY and PVAI_ADMIN_TOKEN set

(serve-for-contract.mjs sets those.) Checks, through the generated client only:
  1. list_models with the key as `Authorization: Bearer`: 200 and the four PV models (and PV-EMBED, kind
     embedding, when the server has an embedding model: serve-for-contract.mjs --models setup);
  2. get_model with the key as `X-API-Key`: 200 (the other security scheme);
  3. a chat completion with an unknown model: 400 with body code INVALID_MODEL (a model name is any string to
     the client: the server's names include the aliases its configuration adds);
  4. list_models with a wrong key: 401 with body code UNAUTHORIZED;
  5. an account created through the admin API with 3,000,000,000 credits (past 2^31) reads that balance
     from get_usage;
  6. with PV-EMBED listed, create_embedding: a vector of the model's dimensions per text, and base64 (little-endian
     float32) the same values as float;
  7. a file uploaded, a vector store created twice under one Idempotency-Key (the same store both times), the file
     attached, found by a search, deleted and no longer found.
Exits 1 on the first failed check.
"""

import base64
import json
import os
import secrets
import time
import struct
import sys

import pvai_client
from pvai_client.exceptions import ApiException

URL = os.environ["PVAI_URL"]
KEY = os.environ["PVAI_API_KEY"]
ADMIN_TOKEN = os.environ["PVAI_ADMIN_TOKEN"]
BIG_BALANCE = 3_000_000_000  # past 2^31
EXPECTED_MODELS = {"PV-TURBO", "PV-STANDARD", "PV-ADVANCED", "PV-CODEX"}


def client(**auth):
    return pvai_client.ApiClient(pvai_client.Configuration(host=URL, **auth))


def fail(message):
    print(f"FAIL {message}")
    sys.exit(1)


def ok(message):
    print(f"ok   {message}")


def error_code(err: ApiException):
    try:
        return json.loads(err.body).get("code")
    except (TypeError, ValueError):
        return None


def expect_error(call, status, code, what):
    try:
        result = call()
    except ApiException as err:
        if err.status != status or error_code(err) != code:
            fail(f"{what}: expected {status} {code}, got {err.status} {err.body}")
        ok(f"{what}: {status} {code}")
        return
    fail(f"{what}: expected {status} {code}, got a success: {result!r}")


# 1. list models, Bearer
with client(access_token=KEY) as api:
    models = pvai_client.ModelsApi(api).list_models_with_http_info()
    if models.status_code != 200:
        fail(f"list_models: status {models.status_code}")
    kinds = {(m.id.value if hasattr(m.id, "value") else m.id): m.kind for m in models.data.data}
    embedding = kinds.pop("PV-EMBED", None)
    if len(models.data.data) != len(kinds) + (embedding is not None) or set(kinds) != EXPECTED_MODELS:
        fail(f"list_models: expected the four PV models (and PV-EMBED), got {sorted(kinds)}")
    if set(kinds.values()) != {"chat"} or embedding not in (None, "embedding"):
        fail(f"list_models: expected kind chat for the four and embedding for PV-EMBED, got {kinds} and {embedding}")
    dimensions = next((m.dimensions for m in models.data.data if m.kind == "embedding"), None)
    ok(f"list_models (Bearer): 200, {sorted(kinds)}" + (" and PV-EMBED" if embedding else ""))

# 2. one model, X-API-Key
with client(api_key={"ApiKeyHeader": KEY}) as api:
    model = pvai_client.ModelsApi(api).get_model("PV-STANDARD")
    model_id = model.id.value if hasattr(model.id, "value") else model.id
    if model_id != "PV-STANDARD":
        fail(f"get_model: expected PV-STANDARD, got {model_id}")
    ok("get_model (X-API-Key): 200 PV-STANDARD")

# 3. invalid model → 400 INVALID_MODEL
# A model name is any string to the client (the server's names include the aliases its configuration adds).
with client(access_token=KEY) as api:
    request = pvai_client.ChatCompletionRequest(
        model="PV-NONEXISTENT",
        user_id="python-smoke",
        messages=[
            pvai_client.ChatMessage(
                pvai_client.UserMessage(role="user", content=pvai_client.MessageContent("Hello"))
            )
        ],
    )
    expect_error(
        lambda: pvai_client.ChatApi(api).create_chat_completion(request),
        400,
        "INVALID_MODEL",
        "create_chat_completion with an unknown model",
    )

# 4. wrong key → 401 UNAUTHORIZED
with client(access_token="pv_sk_" + "0" * 40) as api:
    expect_error(lambda: pvai_client.ModelsApi(api).list_models(), 401, "UNAUTHORIZED", "list_models with a wrong key")

# 5. a balance past 2^31
with client(access_token=ADMIN_TOKEN) as api:
    created = pvai_client.AdminApi(api).admin_create_account(
        pvai_client.AccountCreateRequest(
            email=f"python-smoke-{secrets.token_hex(4)}@example.com", tier="enterprise", credits=BIG_BALANCE
        )
    )
with client(access_token=created.api_key) as api:
    usage = pvai_client.UsageApi(api).get_usage()
    if usage.credits.balance != BIG_BALANCE:
        fail(f"get_usage: expected a balance of {BIG_BALANCE}, got {usage.credits.balance}")
    ok(f"get_usage: balance {usage.credits.balance} (past 2^31)")

# 6. embeddings, when the server has an embedding model
if embedding is None:
    ok("create_embedding: skipped, no embedding model on this server (serve-for-contract.mjs --models setup)")
else:
    texts = ["The cat sits on the mat.", "A feline rests on a rug."]
    with client(access_token=KEY) as api:
        embeddings = pvai_client.EmbeddingsApi(api)
        as_float = embeddings.create_embedding(
            pvai_client.EmbeddingRequest(model="PV-EMBED", input=pvai_client.EmbeddingRequestInput(texts))
        )
        as_base64 = embeddings.create_embedding(
            pvai_client.EmbeddingRequest(
                model="PV-EMBED", input=pvai_client.EmbeddingRequestInput(texts), encoding_format="base64"
            )
        )
    floats = [item.embedding.actual_instance for item in as_float.data]
    encoded = [item.embedding.actual_instance for item in as_base64.data]
    if [len(v) for v in floats] != [dimensions] * len(texts):
        fail(f"create_embedding: expected {len(texts)} vectors of {dimensions}, got {[len(v) for v in floats]}")
    decoded = [list(struct.unpack(f"<{dimensions}f", base64.b64decode(text))) for text in encoded]
    as_float32 = [list(struct.unpack(f"<{dimensions}f", struct.pack(f"<{dimensions}f", *v))) for v in floats]
    if decoded != as_float32:
        fail("create_embedding: the base64 vectors are not the float ones")
    ok(f"create_embedding: {len(floats)} vectors of {dimensions}, base64 = float, {as_float.usage.prompt_tokens} tokens")

# 7. files and a vector store through the generated client: a multipart upload, an attach, a search that finds it
with client(access_token=KEY) as api:
    fact = b"The generated client found the lighthouse key under the third stair."
    uploaded = pvai_client.FilesApi(api).create_file(file=("lighthouse.txt", fact), purpose="assistants")
    if uploaded.bytes != len(fact) or uploaded.filename != "lighthouse.txt":
        fail(f"create_file: expected {len(fact)} bytes named lighthouse.txt, got {uploaded}")
    stores = pvai_client.VectorStoresApi(api)
    # Under an Idempotency-Key (an optional header, so passed by name): the retry is the first answer, the same store.
    request = pvai_client.VectorStoreCreateRequest(name="smoke")
    store = stores.create_vector_store(idempotency_key="smoke-store-1", vector_store_create_request=request)
    again = stores.create_vector_store(idempotency_key="smoke-store-1", vector_store_create_request=request)
    if again.id != store.id:
        fail(f"create_vector_store retried under one Idempotency-Key: expected {store.id} again, got {again.id}")
    attached = stores.create_vector_store_file(
        store.id, pvai_client.VectorStoreFileCreateRequest(file_id=uploaded.id, attributes={"kind": pvai_client.FileAttributesValue("note")})
    )
    for _ in range(100):
        if attached.status != "in_progress":
            break
        time.sleep(0.1)
        attached = stores.get_vector_store_file(store.id, uploaded.id)
    if attached.status != "completed":
        fail(f"create_vector_store_file: expected completed, got {attached.status} {attached.last_error}")
    found = stores.search_vector_store(
        store.id, pvai_client.VectorStoreSearchRequest(query=pvai_client.VectorStoreSearchRequestQuery("lighthouse key"))
    )
    top = found.data[0] if found.data else None
    if top is None or top.file_id != uploaded.id or "third stair" not in top.content[0].text:
        fail(f"search_vector_store: expected the uploaded fact first, got {found.data}")
    pvai_client.FilesApi(api).delete_file(uploaded.id)
    if stores.search_vector_store(
        store.id, pvai_client.VectorStoreSearchRequest(query=pvai_client.VectorStoreSearchRequestQuery("lighthouse key"))
    ).data:
        fail("search_vector_store: the deleted file is still found")
    ok(f"files and vector stores: uploaded {uploaded.bytes} bytes, one store for two keyed creates, attached, found at score {top.score}, deleted")

print("python client smoke test passed")
