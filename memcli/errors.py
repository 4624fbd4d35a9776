"""Every error the library raises on purpose.

The library never prints or exits; the CLI maps these to a message on stderr and the exit code below,
so scripts can tell "you asked wrong" (2) from "not there" (4) from "the store or a model is broken".
"""


# Exit codes that are not errors: grep-like "nothing found", doctor's "something is wrong", a declined
# confirmation. Each MemError subclass below carries its own code.
NOTHING = 1


class MemError(Exception):
    """Base class; `exit_code` is what the CLI exits with."""

    exit_code = 3


class InputError(MemError):
    """The user's input is unusable: empty, binary, too large, a missing file, a bad date."""

    exit_code = 2


class NotFound(MemError):
    """No memory (or model) answers to the name given."""

    exit_code = 4


class AmbiguousId(MemError):
    """A short id or id prefix matches more than one memory (or thread); nothing is done on a guess. `candidates`
    holds one line per match (id, date, the start of its text) so the user can pick."""

    exit_code = 4

    def __init__(self, prefix: str, matches: list[str], candidates: list[str] | None = None, more: bool = False,
                 kinds: str = "memories"):
        self.prefix = prefix
        self.matches = matches
        lines = candidates or matches
        shown = "".join(f"\n  {line}" for line in lines[:10]) + ("\n  ..." if more or len(matches) > 10 else "")
        count = f"more than {len(matches)}" if more else len(matches)
        super().__init__(f"id {prefix!r} is ambiguous: it matches {count} {kinds}; give more of the id{shown}")


class StoreError(MemError):
    """The store is missing, unwritable, locked too long, or its settings are broken."""

    exit_code = 5


class NotOurs(StoreError, OSError):
    """A folder or file of the store's machine-only part (`.queue/`, `.capture/`) that this machine's mem did
    not make: a link, another user's, no valid seal. An OSError too, so a hook that meets one carries on as
    with any file it cannot use; on the command line it is a store error with its message."""


class LocalDataExposed(StoreError):
    """What stays on this machine (memories/local/, threads/local/) would reach git: a committed link
    there, or a .gitignore that lets git take it. Nothing is written there until that is mended."""


class InvalidMemory(MemError):
    """A memory file or record does not follow the schema."""

    exit_code = 5


class ModelError(MemError):
    """A model is missing, corrupt, of the wrong role, or could not be fetched."""

    exit_code = 6


class ProviderError(ModelError):
    """A compression server did not give an answer. `kind` says why: timeout, connection, rate-limit (429),
    server (5xx), auth (401/403 or no key), circuit-open, rate-limited (mem's own max_per_minute),
    bad-request (another 4xx) or bad-response. `transient` kinds leave the job pending for a later try;
    `retry_after` is the server's Retry-After in seconds, when it sent one."""

    TRANSIENT = frozenset({"timeout", "connection", "rate-limit", "server", "circuit-open", "rate-limited"})

    def __init__(self, kind: str, message: str, retry_after: float | None = None):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        return self.kind in self.TRANSIENT

    @property
    def retryable(self) -> bool:
        """Worth another request now (after a pause); the circuit and mem's own limits are not."""
        return self.kind in {"timeout", "connection", "rate-limit", "server"}


class Refused(MemError):
    """A write was refused on purpose (a secret survived redaction, an ignored path)."""

    exit_code = 7


def describe(exc: BaseException) -> str:
    """An exception as one line for a person: mem's own messages as they are, anything else with its
    type (a bare `KeyError: 'x'` says little without it). The one place the library turns an error
    into text; callers add context around it."""
    if isinstance(exc, MemError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
