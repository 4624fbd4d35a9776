"""Small developer texts of each kind, shaped as the tools print them, for the compression tests."""

DIFF = """commit 2e7c39c42d902a923b123c6ffbfbe26729995aad
Author: Ada Lovelace <ada@example.org>
Date:   Sat May 10 02:10:39 2014 +0200

    Retry uploads with exponential backoff

    The client gave up after the first timeout, so a flaky network lost uploads.
    Now it backs off, starting at 250 ms, and gives up after five attempts.
---
 src/app/upload.py   | 9 ++++++---
 tests/test_upload.py | 4 ++++
 2 files changed, 10 insertions(+), 3 deletions(-)

diff --git a/src/app/upload.py b/src/app/upload.py
index 9c1ce489..b480d32b 100644
--- a/src/app/upload.py
+++ b/src/app/upload.py
@@ -10,12 +10,16 @@ class Uploader:
     def __init__(self, client):
         self.client = client
         self.sent = 0
         self.failed = 0
 
     def send(self, payload):
-        return self.client.post("/upload", payload, timeout=5)
+        for attempt in range(5):
+            try:
+                return self.client.post("/upload", payload, timeout=5)
+            except TimeoutError:
+                time.sleep(0.25 * 2 ** attempt)
+        raise UploadFailed(payload)
 
     def close(self):
-        self.client.close()
-        self.closed = True
+        self.client.close()
         return self.sent
diff --git a/tests/test_upload.py b/tests/test_upload.py
index 290b95b6..28ea5f08 100644
--- a/tests/test_upload.py
+++ b/tests/test_upload.py
@@ -1,3 +1,7 @@ import pytest
 from app.upload import Uploader
 
 
+def test_send_retries_five_times(flaky_client):
+    with pytest.raises(UploadFailed):
+        Uploader(flaky_client).send(b"x")
+    assert flaky_client.calls == 5
"""

PYTEST = """============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0
rootdir: /home/dev/src/app
plugins: hypothesis-6.170.17
collected 52 items

tests/test_models.py ........................................            [ 76%]
tests/test_upload.py .........F..                                        [100%]

=================================== FAILURES ===================================
________________________ test_send_retries_five_times _________________________

flaky_client = <FlakyClient calls=1>

    def test_send_retries_five_times(flaky_client):
        with pytest.raises(UploadFailed):
            Uploader(flaky_client).send(b"x")
>       assert flaky_client.calls == 5
E       assert 1 == 5
E        +  where 1 = <FlakyClient calls=1>.calls

tests/test_upload.py:12: AssertionError
=========================== short test summary info ============================
FAILED tests/test_upload.py::test_send_retries_five_times - assert 1 == 5
========================= 1 failed, 51 passed in 0.84s =========================
"""

TRACEBACK = """Traceback (most recent call last):
  File "/home/dev/src/app/cli.py", line 41, in <module>
    main()
  File "/home/dev/src/app/cli.py", line 37, in main
    report = build_report(load_config(args.config))
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/venv/lib/python3.11/site-packages/yaml/__init__.py", line 125, in safe_load
    return load(stream, SafeLoader)
           ^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/venv/lib/python3.11/site-packages/yaml/__init__.py", line 81, in load
    return loader.get_single_data()
           ^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/venv/lib/python3.11/site-packages/yaml/constructor.py", line 49, in get_single_data
    node = self.get_single_node()
  File "/home/dev/venv/lib/python3.11/site-packages/yaml/composer.py", line 36, in get_single_node
    document = self.compose_document()
  File "/home/dev/venv/lib/python3.11/site-packages/yaml/parser.py", line 98, in check_event
    self.current_event = self.state()
yaml.parser.ParserError: while parsing a block mapping
"""

LOG = "\n".join(
    ["2026-11-29T23:40:00Z INFO worker started pid=4121"]
    + [f"2026-11-29T23:40:{s:02d}Z INFO heartbeat ok queue=0" for s in range(1, 30)]
    + ["2026-11-29T23:40:31Z WARNING disk usage at 91% on /var/lib/app"] * 3
    + ["2026-11-29T23:40:35Z ERROR upload failed: timeout after 5s (attempt 5)"]
    + ["2026-11-29T23:40:36Z INFO worker stopped"]
)

JSON_DOC = """{
    "name": "billing",
    "replicas": 3,
    "limits": {
        "cpu": "500m",
        "memory": "512Mi"
    },
    "env": [
        {"name": "RETRY_MS", "value": "250"},
        {"name": "REGION", "value": "eu-west-1"}
    ],
    "debug": false
}"""

NOTE_WITH_CODE = """The upload client now retries with a backoff, and we keep the old helper for the CLI until
the next release because the batch script still imports it directly from the module.

```python
def backoff(attempt: int) -> float:
    return 0.25 * 2 ** attempt  # seconds, or (payload.get("delay") or 0)
```

Unfenced, as people paste it:

    summed: dict[int, float] = {}
    for row in rows:
        summed[row.id] = summed.get(row.id, 0.0) + (row.amount or 0)
"""

CAPTURED = "Ran `pytest -q tests/test_upload.py` (exit 1).\n\n" + PYTEST
