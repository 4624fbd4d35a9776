"""How long work reports progress: one callback shape for the whole library.

`progress(phase, done, total)`: `phase` names the work ("embedding memories", a model's name), `done`
and `total` count its units (memories, chunks, bytes); `total` is None when unknown. The library only
calls it; the CLI draws bars on stderr (memcli.cli.common.ProgressBars), the MCP server passes None.
"""

from __future__ import annotations

from typing import Callable

Progress = Callable[[str, int, "int | None"], None]
