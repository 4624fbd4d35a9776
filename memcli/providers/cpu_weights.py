"""A language model's weights in a format llama.cpp computes fast on a CPU, converted once from the file given.

llama.cpp's CPU backend has fast matrix kernels for Q8_0 (llamafile's tinyBLAS; Q4_0 is repacked) and
none for Q4_1, the format of the default compression model: its forward pass over a 150-token note took
1.5-1.6 s of CPU as Q4_1 and 0.9-1.0 s with the same weights as Q8_0 (2 shared cores, load 4-5). Q8_0
holds every Q4_1 weight to within 1/254 of its block's largest magnitude, so the surprisals barely move.

The converted file is a cache: made on the first load into `converted/` beside the models, named by
the source file's fingerprint (a changed source gets a new copy), written under a temporary name and
renamed, so a concurrent process sees the whole file or none. If it cannot be made (a read-only cache,
a full disk) the source is loaded as it is: slower, never broken.
"""

from __future__ import annotations

import ctypes
import logging
from pathlib import Path
from typing import Any, Callable

from memcli.util.fsutil import sibling_temp
from memcli.util.paths import models_dir

log = logging.getLogger("memcli")

# llama_ftype values (llama.h) of the weight formats with no fast CPU kernel: LLAMA_FTYPE_MOSTLY_Q4_1.
SLOW_FILE_TYPES = frozenset({"3"})


def load(llama_cpp, path: Path, digest: str, load_file: Callable[[Path], Any], threads: int):
    """The model of path (whose fingerprint is digest), loaded by load_file from its Q8_0 copy when its
    weights have no fast CPU kernel; the copy is made on the first load. llama_cpp: the module."""
    fast = _target(path, digest)
    if fast.is_file():
        return load_file(fast)
    llama = load_file(path)
    if llama.metadata.get("general.file_type") not in SLOW_FILE_TYPES or not convert(llama_cpp, path, fast, threads):
        return llama
    llama.close()
    return load_file(fast)


def convert(llama_cpp, path: Path, target: Path, threads: int) -> bool:
    """Write the Q8_0 copy of path to target; False (logged) when it cannot be written."""
    temp = sibling_temp(target)
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0
    params.allow_requantize = True
    params.nthread = threads
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        failed = llama_cpp.llama_model_quantize(str(path).encode(), str(temp).encode(), ctypes.byref(params))
        if failed:
            raise OSError(f"llama.cpp returned {failed}")
        temp.replace(target)
    except OSError as exc:
        log.info("could not write the Q8_0 copy of %s (%s); it stays as it is, slower", path, exc)
        temp.unlink(missing_ok=True)
        return False
    log.info("converted %s to Q8_0 once for speed: %s", path.name, target)
    return True


def forget(path: Path) -> None:
    """Delete every converted copy of a model file (`mem models rm`)."""
    for copy in (models_dir() / "converted").glob(f"{path.stem}.*.q8_0.gguf"):
        copy.unlink(missing_ok=True)


def _target(path: Path, digest: str) -> Path:
    return models_dir() / "converted" / f"{path.stem}.{digest}.q8_0.gguf"
