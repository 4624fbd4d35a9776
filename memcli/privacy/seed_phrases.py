"""A wallet's recovery phrase (BIP-39 mnemonic): twelve to twenty-four words of a fixed list, which is the
whole key to the wallet. Known by its words, with no label needed: prose almost never strings twelve
words of that list together (it has none of "the", "a", "of", "is", "to").

The list is BIP-39's English one as the `mnemonic` package (Trezor's reference implementation, MIT)
ships it, read when a text first holds a run of twelve words that could be one.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memcli.privacy.secret_values import Detector

SHORTEST = 12  # words in the shortest phrase BIP-39 defines (12, 15, 18, 21 or 24)
# A run of words of 3 to 8 letters (every word of the list is), one blank, comma or line end between them,
# and perhaps a number (`1. abandon 2. ability`), as a backup card or a wallet's screen lists them.
_SEP = r"(?=[ \t,;\r\n])[ \t]*(?:[,;][ \t]*)?(?:\r?\n[ \t]*)?(?:\d{1,2}[.):][ \t]*)?"
_RUN = re.compile(rf"(?<![\w-])[A-Za-z]{{3,8}}(?:{_SEP}[A-Za-z]{{3,8}}){{{SHORTEST - 1},}}(?![\w-])")
_WORD = re.compile(r"[A-Za-z]+")


@lru_cache(maxsize=1)
def _wordlist() -> frozenset[str]:
    from importlib.resources import files

    return frozenset((files("mnemonic") / "wordlist" / "english.txt").read_text(encoding="utf-8").split())


def _phrase(m: re.Match) -> tuple[int, int] | None:
    """The longest stretch of the run made only of the list's words, when it is long enough. The whole
    stretch goes, a common word of the list beside the phrase too (`that`, `all`): which twelve or
    twenty-four of them are the phrase cannot be told, and a shorter cut could leave one of its words."""
    words = _wordlist()
    best, start, count = None, None, 0
    for word in _WORD.finditer(m.group()):
        if word.group().lower() in words:
            start = word.start() if count == 0 else start
            count += 1
            if count >= SHORTEST and (best is None or count > best[2]):
                best = (start, word.end(), count)
        else:
            count = 0
    return None if best is None else (m.start() + best[0], m.start() + best[1])


class SeedPhraseDetector(Detector):
    def span(self, m: re.Match) -> tuple[int, int]:
        return _phrase(m) or m.span()


SEED_PHRASE = SeedPhraseDetector("seed-phrase", _RUN, lambda m: _phrase(m) is not None)
