"""What every check of the Python clients shares (test/clients/python/python_clients.py and the Responses API's checks in
test/clients/python/responses_clients.py): the server serve-for-contract.mjs started, the models, the `openai` client, and
the check machinery. Every check prints `ok …` or `FAIL …`; python_clients.py exits 1 when `failures` is not empty.
"""

import json
import os
import sys
import traceback
import urllib.error
import urllib.request

import openai
from openai import OpenAI

URL = os.environ["PVAI_URL"]
BASE_URL = f"{URL}/z1"
API_KEY = os.environ["PVAI_API_KEY"]
ADMIN_TOKEN = os.environ["PVAI_ADMIN_TOKEN"]
CHAT_MODEL = os.environ.get("PVAI_CHAT_MODEL", "PV-TURBO")
EMBEDDING_MODEL = os.environ.get("PVAI_EMBEDDING_MODEL_ID", "PV-EMBED")
MAX_TOKENS = 8

failures = []


def ok(message):
    print(f"ok   {message}")


def check(name):
    """Runs the decorated function at once as one check: an exception is a FAIL, the others still run."""

    def run(fn):
        try:
            fn()
        except Exception as err:  # noqa: BLE001 - every failure is reported the same way
            failures.append(name)
            print(f"FAIL {name}: {type(err).__name__}: {err}")
            traceback.print_exc(limit=3, file=sys.stdout)
        return fn

    return run


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def raw_error(path, body, key=API_KEY):
    """pvai's own error body for a request, read without any client library: what the clients must surface."""
    request = urllib.request.Request(
        f"{BASE_URL}{path}",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as res:
            raise AssertionError(f"expected an error from {path}, got {res.status}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def expect_pvai_error(err, status, expected_body):
    """An openai.APIStatusError that carries pvai's status, message and code."""
    expect(isinstance(err, openai.APIStatusError), f"not an APIStatusError: {err!r}")
    expect(err.status_code == status, f"status {err.status_code}, expected {status}")
    message = expected_body["message"]
    expect(isinstance(err.body, dict) and err.body.get("message") == message, f"error body {err.body!r}")
    expect(message in str(err), f"the error's text does not show pvai's message {message!r}: {err}")
    expect(err.code == expected_body["error"]["code"], f"code {err.code!r}, expected {expected_body['error']['code']!r}")


client = OpenAI(base_url=BASE_URL, api_key=API_KEY, max_retries=0)
