"""What the CPU decides: int8 or float32 arithmetic by its instructions, the int8 weights' layout
that sums exactly on it, and how many threads a session runs.

Int8 matrix products sum exactly on every CPU (the weights' layout follows the CPU's kernel: see
:data:`INT8_FLAGS`); a new model runs int8 where the CPU has int8 dot-product instructions or AVX2
(:data:`UNSIGNED_INT8_FLAGS`) and float32 elsewhere. Chosen at run time, so one install serves
every machine.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

#: The precisions of the matrix products.
PRECISIONS = ("int8", "float32")

#: Names a precision for the embedded backends a process makes when none is passed (opting out: float32).
PRECISION_VARIABLE = "INDEXER_PRECISION"

#: CPU flags (Linux /proc/cpuinfo) of the instructions onnxruntime's int8 matrix products are fast with:
#: x86 VNNI (AVX-512 or AVX) and Arm's dot product, which add u8 x s8 products in 32 bits. New indexes
#: run int8 where the CPU has one of them. Elsewhere an index recorded as int8 still runs int8, with
#: the weights in the "uint8" layout (int8.WEIGHT_LAYOUTS): x86's older u8 x s8 path (AVX2,
#: AVX-512 without VNNI) adds pairs in 16 bits with saturation, its u8 x u8 path exactly, so the sums
#: and the vectors are the same on every CPU.
INT8_FLAGS = ("avx512_vnni", "avx_vnni", "asimddp")
#: x86 CPU flags without int8 dot products on which new indexes run int8 all the same: with AVX2,
#: the u8 x u8 path costs less than float32 when each run of the model has a thread of its own, as
#: the embedded backend's runs do (bench/RESULTS.md, "Embedding speed"). Elsewhere (older x86, Arm
#: without the dot product) it is unmeasured, and float32 is the safe choice.
UNSIGNED_INT8_FLAGS = ("avx2",)

#: What the optimised copy's cache key names as the int8 kernel on a CPU without those instructions.
UINT8_KERNEL = "u8 x u8"


def int8_instructions(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's int8 dot-product instructions from :data:`INT8_FLAGS` (space-separated), or None.

    Read from Linux's ``cpuinfo`` (``flags`` on x86, ``Features`` on Arm). Every Apple silicon Mac has
    Arm's dot product. Elsewhere (Windows, or no such file) None: float32, the safe choice.
    """
    if platform.system() == "Darwin" and platform.machine() == "arm64":
        return "asimddp"
    flags = cpu_flags(cpuinfo)
    found = [flag for flag in INT8_FLAGS if flag in flags]
    return " ".join(found) or None


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    """The CPU's flags from Linux's ``cpuinfo`` (``flags`` on x86, ``Features`` on Arm); none where
    there is no such file."""
    try:
        lines = cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return set()
    flags: set[str] = set()
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags.update(value.split())
    return flags


def default_precision(instructions: str | None, cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The precision of a new backend on a CPU with these :func:`int8_instructions`: int8 where it
    has int8 dot products or one of :data:`UNSIGNED_INT8_FLAGS`, float32 elsewhere."""
    if instructions or cpu_flags(cpuinfo).intersection(UNSIGNED_INT8_FLAGS):
        return "int8"
    return "float32"


def weight_layout(instructions: str | None) -> str:
    """The int8 weights' layout that the CPU with these :func:`int8_instructions` sums exactly (see
    :data:`indexer.backends.onnx.int8.WEIGHT_LAYOUTS`): signed with a dot product, else unsigned."""
    return "int8" if instructions else "uint8"


def physical_cores() -> int:
    """Cores this process may run on, hyper-threaded siblings counted once.

    Matrix products do not get faster on a sibling thread, they only contend. Read from Linux's CPU
    topology within this process's affinity (which also honours container CPU sets); elsewhere 0, which
    lets onnxruntime pick (it counts physical cores itself).
    """
    if not hasattr(os, "sched_getaffinity"):
        return 0
    cpus = os.sched_getaffinity(0)
    siblings = set()
    for cpu in cpus:
        try:
            siblings.add(Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text())
        except OSError:
            return len(cpus)
    return len(siblings)
