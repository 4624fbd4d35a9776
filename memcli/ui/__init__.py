"""`mem ui`: one store as a local web page, to look before trusting it.

What mem holds (each memory's raw and compressed forms side by side, what compression dropped, the
guard's verdict), what it will hand the assistant (the captured sessions and the SessionStart digest,
read as the hook reads it) and how the store is doing (savings by kind, the work queue, the vector
cache, doctor's findings). Server-rendered pages on Starlette and uvicorn (which the MCP SDK brings)
with Jinja2 templates, no JavaScript; every action goes through the library calls the CLI makes.

access.py       who may ask: the per-start token, the Host header, cross-site requests
store_thread.py every library call on one thread, after a look at the files
memory_views.py the memories page and one memory: filters, search, versions, the guard's verdict
dropped.py      the words compression dropped, marked
timeline.py     captured sessions per project, and the digest the next session gets
overview.py     the store: savings by kind, the work queue, the vector cache, doctor
app.py          the routes, the templates, errors as pages
launch.py       the socket on 127.0.0.1, the URL with its token, the browser
"""
