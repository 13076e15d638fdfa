#!/usr/bin/env python3
"""OpenAI's Files and Vector Stores APIs through the `openai` SDK, unmodified, against a running pvai server:

    node test/contract/serve-for-contract.mjs --upstream none --models setup -- \\
      .tools/venv/bin/python test/clients/python/vector_store_clients.py

(the server, the client and the check machinery are client_checks.py's; the openai version is pinned in .ci/run.)
A .txt with a planted fact is uploaded (`files.create`) and read back byte for byte (`files.content`, a file of
several MiB too, past the 1 MiB parts it is stored in); a vector store holds it through `files.create_and_poll` with
`attributes`, and two more through `file_batches.upload_and_poll`; `vector_stores.search` finds the fact, its
character span exact in the text `vector_stores.files.content` returns (UTF-16 units, as pvai's spans are: an emoji
comes before the fact so that code points would not do); `filters` narrow the results; a deleted file is searched no
more; `responses.create` with `file_search` on the store answers a `file_search_call` whose results name the file;
another account sees none of it. Every check prints `ok …` or `FAIL …`; the exit status is 1 when any failed.
"""

import json
import re
import secrets
import sys
import urllib.request

sys.dont_write_bytecode = True  # the modules beside this one leave no __pycache__ in test/clients/python/
import openai  # noqa: E402
from openai import OpenAI  # noqa: E402

from client_checks import (  # noqa: E402
    ADMIN_TOKEN,
    BASE_URL,
    CHAT_MODEL,
    URL,
    check,
    client,
    expect,
    expect_pvai_error,
    failures,
    ok,
    raw_error,
)

TAG = secrets.token_hex(3)
CODE = f"KESTREL-{secrets.randbelow(9000) + 1000}"
FACT = f"The vault code of the Zephyr lighthouse is {CODE}."
FILLER = [
    "Opening hours. The office opens at eight in the morning and closes at six in the evening on weekdays; "
    "on Saturdays only the front desk is staffed, from nine until noon, and on Sundays the building is closed.",
    "Travel. Train tickets are booked through the travel desk at least a week ahead; a hotel room may cost up "
    "to one hundred and forty euros a night in a capital city and ninety elsewhere, breakfast included.",
    "Equipment. Every employee receives a laptop, a headset and a badge on the first day; a lost badge is "
    "reported to the front desk at once and replaced the same afternoon for a fee of ten euros.",
    "Meetings. A meeting room is booked in the calendar; a booking not used within fifteen minutes is released "
    "so that somebody else can take the room, and the whiteboards are wiped clean after every meeting.",
]
# The handbook: filler, the fact in the middle (after an emoji: one code point, two UTF-16 units), more filler,
# text that is not ASCII after it (é, —, ü, 🔑), so that the bytes read back prove they were kept as they were.
HANDBOOK = (
    f"Company handbook {TAG} 🏢\n\n"
    + "\n\n".join(FILLER[:2])
    + f"\n\nSecurity. {FACT} Only the night keeper may open the vault.\n\n"
    + "\n\n".join(FILLER[2:])
    + "\n\nCafé rules — the crème brûlée is für everyone 🔑.\n"
)
SHIPPING_CODE = f"Thursday {TAG}"
BATCH = {
    f"warehouse-{TAG}.txt": f"Company handbook, logistics. The Orion warehouse ships parcels every {SHIPPING_CODE}; "
    "the loading dock opens at dawn and the trucks leave before noon.\n",
    f"canteen-{TAG}.txt": "Company handbook, canteen. Lunch is served from half past eleven to two; the soup of the "
    "day is vegetarian and the coffee machine on the third floor is free of charge.\n",
}
FILE_ID = re.compile(r"^file-[0-9a-f]{24}$")
STORE_ID = re.compile(r"^vs_[0-9a-f]{24}$")
BATCH_ID = re.compile(r"^vsfb_[0-9a-f]{24}$")

state = {}  # what one check makes and the next ones use


def need(*keys):
    missing = [k for k in keys if k not in state]
    expect(not missing, f"an earlier check failed: no {', '.join(missing)}")
    return [state[k] for k in keys]


def js_slice(text, start, end):
    """`text.slice(start, end)` as JavaScript counts: UTF-16 code units."""
    units = text.encode("utf-16-le")
    return units[2 * start : 2 * end].decode("utf-16-le", errors="replace")


def search_ids(store_id, query, **kwargs):
    return [r.file_id for r in client.vector_stores.search(store_id, query=query, max_num_results=20, **kwargs)]


@check("openai: files.create, retrieve, list and content (byte-identical)")
def _():
    data = HANDBOOK.encode("utf-8")
    name = f"handbook-{TAG}.txt"
    uploaded = client.files.create(file=(name, data, "text/plain"), purpose="assistants")
    expect(FILE_ID.match(uploaded.id), f"file id {uploaded.id!r}")
    expect(uploaded.object == "file" and uploaded.bytes == len(data), f"uploaded {uploaded}")
    expect(uploaded.filename == name and uploaded.purpose == "assistants", f"uploaded {uploaded}")
    expect(uploaded.status == "processed", f"status {uploaded.status}")
    got = client.files.retrieve(uploaded.id)
    expect(got.id == uploaded.id and got.bytes == len(data) and got.filename == name, f"retrieved {got}")
    listed = [f.id for f in client.files.list(purpose="assistants")]
    expect(uploaded.id in listed, f"files.list does not list {uploaded.id}: {listed}")
    back = client.files.content(uploaded.id).content
    expect(back == data, f"files.content: {len(back)} bytes, {back[:80]!r}…, not the {len(data)} uploaded")
    state["file"] = uploaded
    # Several MiB (the bytes are stored in 1 MiB parts), a line number in each line: read back whole, in order.
    big = "".join(f"{i:07d} the quick brown fox jumps over the lazy dog, café ☕\n" for i in range(60_000)).encode()
    large = client.files.create(file=(f"large-{TAG}.txt", big, "text/plain"), purpose="user_data")
    expect(large.bytes == len(big) and large.purpose == "user_data", f"large upload {large}")
    back_big = client.files.content(large.id).content
    same = back_big == big
    first_diff = next((i for i, (a, b) in enumerate(zip(back_big, big)) if a != b), min(len(back_big), len(big)))
    expect(same, f"files.content of {len(big)} bytes: {len(back_big)} back, first difference at byte {first_diff}")
    deleted = client.files.delete(large.id)
    expect(deleted.id == large.id and deleted.deleted is True, f"deleted {deleted}")
    try:
        client.files.content(large.id)
        raise AssertionError("a deleted file's content was read")
    except openai.NotFoundError:
        pass
    try:
        client.files.create(file=("x.txt", b"hello", "text/plain"), purpose="fine-tune")
        raise AssertionError("purpose fine-tune was accepted")
    except openai.BadRequestError as err:
        expect(err.code == "invalid_parameter" or err.body.get("code") == "INVALID_PARAMETER", f"{err.body}")
    ok(
        f"openai: files.create {uploaded.id} ({len(data)} bytes), retrieve, list; files.content byte-identical, and "
        f"for {len(big):,} bytes too; files.delete → deleted, its content NotFoundError; purpose fine-tune → 400"
    )


@check("openai: vector_stores.create and files.create_and_poll with attributes")
def _():
    (uploaded,) = need("file")
    store = client.vector_stores.create(name=f"Handbook {TAG}", metadata={"suite": "python-clients"})
    expect(STORE_ID.match(store.id) and store.object == "vector_store", f"created {store}")
    expect(store.name == f"Handbook {TAG}" and store.metadata == {"suite": "python-clients"}, f"{store}")
    state["store"] = store
    attached = client.vector_stores.files.create_and_poll(
        uploaded.id, vector_store_id=store.id, attributes={"team": "ops", "year": 2026}, max_wait_seconds=120
    )
    expect(attached.status == "completed", f"create_and_poll ended {attached.status}: {attached.last_error}")
    expect(attached.id == uploaded.id and attached.vector_store_id == store.id, f"attached {attached}")
    expect(attached.attributes == {"team": "ops", "year": 2026}, f"attributes {attached.attributes}")
    got = client.vector_stores.files.retrieve(uploaded.id, vector_store_id=store.id)
    expect(got.status == "completed" and got.attributes == attached.attributes, f"retrieved {got}")
    ok(f"openai: vector store {store.id}; files.create_and_poll({uploaded.id}, attributes) → completed")


@check("openai: file_batches.upload_and_poll, then files.update")
def _():
    (store,) = need("store")
    files = [(name, text.encode(), "text/plain") for name, text in BATCH.items()]
    batch = client.vector_stores.file_batches.upload_and_poll(store.id, files=files)
    expect(BATCH_ID.match(batch.id) and batch.vector_store_id == store.id, f"batch {batch}")
    expect(batch.status == "completed", f"the batch ended {batch.status}: {batch.file_counts}")
    counts = batch.file_counts
    expect(counts.completed == 2 and counts.total == 2 and counts.failed == 0, f"file counts {counts}")
    again = client.vector_stores.file_batches.retrieve(batch.id, vector_store_id=store.id)
    expect(again.id == batch.id and again.status == "completed", f"retrieved {again}")
    in_batch = list(client.vector_stores.file_batches.list_files(batch.id, vector_store_id=store.id))
    expect(len(in_batch) == 2 and all(f.status == "completed" for f in in_batch), f"batch files {in_batch}")
    by_name = {client.files.retrieve(f.id).filename: f.id for f in in_batch}
    expect(sorted(by_name) == sorted(BATCH), f"the batch's files are named {sorted(by_name)}")
    state["warehouse"], state["canteen"] = by_name[f"warehouse-{TAG}.txt"], by_name[f"canteen-{TAG}.txt"]
    attributes_of = {
        state["warehouse"]: {"team": "sales", "year": 2024},
        state["canteen"]: {"team": "sales", "year": 2025},
    }
    for file_id, attributes in attributes_of.items():
        updated = client.vector_stores.files.update(file_id, vector_store_id=store.id, attributes=attributes)
        expect(updated.attributes == attributes, f"files.update: attributes {updated.attributes}")
    held = client.vector_stores.retrieve(store.id)
    expect(held.file_counts.completed == 3 and held.file_counts.total == 3, f"the store's counts {held.file_counts}")
    expect(held.usage_bytes > 0, f"usage_bytes {held.usage_bytes}")
    listed = {f.id for f in client.vector_stores.files.list(store.id)}
    expect(listed == {state["file"].id, *by_name.values()}, f"vector_stores.files.list {listed}")
    ok(
        f"openai: file_batches.upload_and_poll → {batch.id} completed {counts.completed}/{counts.total}; retrieve, "
        f"list_files; files.update attributes; the store holds 3 files ({held.usage_bytes} bytes)"
    )


@check("openai: vector_stores.search finds the planted fact, its span exact")
def _():
    store, uploaded = need("store", "file")
    query = "What is the vault code of the Zephyr lighthouse?"
    page = client.vector_stores.search(store.id, query=query, max_num_results=5)
    results = list(page)
    expect(results, "no results")
    expect(getattr(page, "search_query", [query]) in ([query], query), f"search_query {page.search_query!r}")
    top = results[0]
    expect(top.file_id == uploaded.id and top.filename == uploaded.filename, f"top result {top.file_id} {top.filename}")
    expect(0 <= top.score <= 1 and top.attributes == {"team": "ops", "year": 2026}, f"score/attributes of {top}")
    chunk = "".join(part.text for part in top.content)
    expect(CODE in chunk, f"the best chunk does not hold {CODE}: {chunk!r}")
    parts = list(client.vector_stores.files.content(uploaded.id, vector_store_id=store.id))
    expect(len(parts) == 1 and parts[0].type == "text", f"files.content parts {parts}")
    text = parts[0].text
    expect(FACT in text, f"the extracted text lacks the fact: {text[:200]!r}")
    extra = top.model_extra or {}
    start, end = extra.get("char_start"), extra.get("char_end")
    expect(isinstance(start, int) and isinstance(end, int) and 0 <= start < end, f"span {start}…{end} of {extra}")
    expect(extra.get("chunk_id") and "page" in extra, f"pvai's chunk_id, page: {extra}")
    span = js_slice(text, start, end)
    by_code_points = text[start:end]
    expect(
        span == chunk,
        f"text.slice({start}, {end}) (UTF-16) is {span!r}, the result's text {chunk!r}"
        + (" (slicing by code points matches: the span counts code points)" if by_code_points == chunk else ""),
    )
    status, expected = raw_error(f"/vector_stores/{store.id}/search", {"query": query, "rewrite_query": True})
    try:
        client.vector_stores.search(store.id, query=query, rewrite_query=True)
        raise AssertionError("rewrite_query=True was accepted")
    except openai.BadRequestError as err:
        expect_pvai_error(err, status, expected)
    ok(
        f"openai: vector_stores.search → {len(results)} results, the first {top.file_id} (score {top.score:.3f}) "
        f"holding {CODE}; text.slice({start}, {end}) of files.content = its text; rewrite_query=True → {status}"
    )


@check("openai: vector_stores.search filters narrow the results")
def _():
    store, uploaded = need("store", "file")
    ids = {"ops-2026": uploaded.id, "sales-2024": state.get("warehouse"), "sales-2025": state.get("canteen")}
    query = "company handbook"
    everything = set(search_ids(store.id, query))
    expect(len(everything) >= 2, f"unfiltered, only {everything}")
    ops = set(search_ids(store.id, query, filters={"type": "eq", "key": "team", "value": "ops"}))
    expect(ops == {uploaded.id}, f"team eq ops → {ops}")
    recent_sales = {"type": "and", "filters": [
        {"type": "eq", "key": "team", "value": "sales"}, {"type": "gte", "key": "year", "value": 2025}]}
    narrowed = set(search_ids(store.id, query, filters=recent_sales))
    expect(narrowed == {ids["sales-2025"]}, f"team eq sales and year gte 2025 → {narrowed}")
    not_ops = set(search_ids(store.id, query, filters={"type": "nin", "key": "team", "value": ["ops"]}))
    expect(uploaded.id not in not_ops and not_ops <= {ids["sales-2024"], ids["sales-2025"]}, f"nin ops → {not_ops}")
    none = search_ids(store.id, query, filters={"type": "gt", "key": "year", "value": 2030})
    expect(none == [], f"year gt 2030 → {none}")
    ok(f"openai: filters: unfiltered {len(everything)} files; eq 1; and(eq, gte) 1; nin {len(not_ops)}; gt 0")


@check("openai: a deleted file is searched no more")
def _():
    store, uploaded = need("store", "file")
    deleted = client.files.delete(uploaded.id)
    expect(deleted.id == uploaded.id and deleted.deleted is True, f"files.delete {deleted}")
    found = search_ids(store.id, "What is the vault code of the Zephyr lighthouse?")
    expect(uploaded.id not in found, f"the deleted file is still found: {found}")
    results = client.vector_stores.search(store.id, query=f"vault code Zephyr {CODE}")
    hits = [r.file_id for r in results if any(CODE in part.text for part in r.content)]
    expect(hits == [], f"the planted fact is still found after the delete: {hits}")
    listed = {f.id for f in client.vector_stores.files.list(store.id)}
    expect(uploaded.id not in listed, f"the store still lists the deleted file: {listed}")
    for call in (lambda: client.files.retrieve(uploaded.id),
                 lambda: client.vector_stores.files.retrieve(uploaded.id, vector_store_id=store.id)):
        try:
            call()
            raise AssertionError(f"the deleted file {uploaded.id} was still answered")
        except openai.NotFoundError:
            pass
    ok(f"openai: files.delete({uploaded.id}) → deleted; search finds nothing of it; the store lists {len(listed)}")


@check("openai: responses.create with file_search on vector_store_ids")
def _():
    store, warehouse = need("store", "warehouse")
    response = client.responses.create(
        model=CHAT_MODEL,
        input="On which day does the Orion warehouse ship parcels?",
        tools=[{"type": "file_search", "vector_store_ids": [store.id], "max_num_results": 3}],
        include=["file_search_call.results"],
        instructions="Answer in one short sentence.",
        temperature=0,
        max_output_tokens=64,
    )
    expect(response.status in ("completed", "incomplete"), f"status {response.status}: {response.error}")
    calls = [item for item in response.output if item.type == "file_search_call"]
    expect(len(calls) == 1 and calls[0].status == "completed", f"output {[i.type for i in response.output]}")
    results = calls[0].results or []
    expect(results, f"the file_search_call has no results: {calls[0]}")
    named = [r for r in results if r.file_id == warehouse]
    listed = [(r.file_id, r.filename) for r in results]
    expect(named and named[0].filename == f"warehouse-{TAG}.txt", f"results {listed}")
    expect(SHIPPING_CODE in (named[0].text or ""), f"the result's text {named[0].text!r}")
    expect(all(r.file_id != state["file"].id for r in results), "the deleted file is among the results")
    ok(
        f"openai: responses.create(file_search, vector_store_ids=[{store.id}]) → file_search_call with "
        f"{len(results)} results, {warehouse} ({named[0].filename}) among them; answer {response.output_text!r}"
    )


@check("openai: another account sees none of the files and stores")
def _():
    store, warehouse = need("store", "warehouse")
    request = urllib.request.Request(
        f"{URL}/admin/accounts",
        data=json.dumps({"email": f"vector-stores-{TAG}@example.com", "tier": "enterprise", "credits": 1000}).encode(),
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as res:
        other = OpenAI(base_url=BASE_URL, api_key=json.loads(res.read())["api_key"], max_retries=0)
    calls = {
        "files.retrieve": lambda: other.files.retrieve(warehouse),
        "files.content": lambda: other.files.content(warehouse),
        "vector_stores.retrieve": lambda: other.vector_stores.retrieve(store.id),
        "vector_stores.search": lambda: other.vector_stores.search(store.id, query="warehouse"),
        "vector_stores.files.create": lambda: other.vector_stores.files.create(
            vector_store_id=other.vector_stores.create(name="mine").id, file_id=warehouse
        ),
        "responses.create(file_search)": lambda: other.responses.create(
            model=CHAT_MODEL, input="Hi", max_output_tokens=8,
            tools=[{"type": "file_search", "vector_store_ids": [store.id]}],
        ),
    }
    for what, call in calls.items():
        try:
            call()
            raise AssertionError(f"another account's {what} was answered")
        except openai.NotFoundError:
            pass
    expect(store.id not in {s.id for s in other.vector_stores.list()}, "another account lists the store")
    ok(f"openai: another account: {', '.join(calls)} → NotFoundError; its list has not the store")


@check("openai: deleting the store leaves its files")
def _():
    store, warehouse = need("store", "warehouse")
    deleted = client.vector_stores.delete(store.id)
    expect(deleted.id == store.id and deleted.deleted is True, f"vector_stores.delete {deleted}")
    try:
        client.vector_stores.retrieve(store.id)
        raise AssertionError("a deleted store was retrieved")
    except openai.NotFoundError:
        pass
    kept = client.files.retrieve(warehouse)
    expect(kept.id == warehouse and client.files.content(warehouse).content == BATCH[kept.filename].encode(), f"{kept}")
    for file_id in (warehouse, state["canteen"]):
        client.files.delete(file_id)
    ok(f"openai: vector_stores.delete({store.id}) → deleted, NotFoundError after; its files kept, byte-identical")


if failures:
    print(f"vector store clients: {len(failures)} failed: {', '.join(failures)}")
    sys.exit(1)
print("vector store clients: all passed")
