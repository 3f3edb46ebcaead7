"""Whether gdb can name more of a crash's frames than mariadbd's own crash report.

A release build's report and gdb's backtrace of its core name the same frames
(``.dynsym`` is all a stripped binary has: a static function is ``??`` in
both), unless the binary's separate debug symbols are installed -- Debian's
``mariadb-server-core-dbgsym``, found by gdb as
``/usr/lib/debug/.build-id/<xx>/<rest>.debug`` from the binary's GNU build id
(:func:`debug_file`).  So gdb is worth its seconds on a core when the report
stopped short (no stack, or one that does not reach the thread's start:
:func:`report_complete`) or when such a file exists.
"""
from __future__ import annotations

import os
import struct
from typing import Sequence

DEBUG_ROOTS = ("/usr/lib/debug",)
THREAD_STARTS = frozenset({"start_thread", "clone", "clone3", "__clone", "__clone3",
                           "__libc_start_main", "__libc_start_call_main", "main", "_start"})
_NT_GNU_BUILD_ID = 3


def build_id(binary: str) -> str:
    """The GNU build id of an ELF file, as hex ('' when it has none or is no ELF)."""
    try:
        with open(binary, "rb") as fh:
            head = fh.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2:         # 64-bit ELF only
                return ""
            endian = "<" if head[5] == 1 else ">"
            shoff, = struct.unpack_from(endian + "Q", head, 0x28)
            shentsize, shnum = struct.unpack_from(endian + "HH", head, 0x3A)
            fh.seek(shoff)
            table = fh.read(shentsize * shnum)
            for index in range(shnum):
                sh_type, = struct.unpack_from(endian + "I", table, index * shentsize + 4)
                if sh_type != 7:                                # SHT_NOTE
                    continue
                offset, size = struct.unpack_from(endian + "QQ", table, index * shentsize + 0x18)
                fh.seek(offset)
                found = _build_id_note(fh.read(size), endian)
                if found:
                    return found
    except (OSError, struct.error, IndexError):
        return ""
    return ""


def _build_id_note(data: bytes, endian: str) -> str:
    """The build id in an ELF note section's bytes ('' when it holds none)."""
    at = 0
    while at + 12 <= len(data):
        namesz, descsz, kind = struct.unpack_from(endian + "III", data, at)
        name_end = at + 12 + ((namesz + 3) & ~3)
        desc = data[name_end:name_end + descsz]
        if kind == _NT_GNU_BUILD_ID and data[at + 12:at + 12 + namesz].rstrip(b"\0") == b"GNU":
            return desc.hex()
        at = name_end + ((descsz + 3) & ~3)
    return ""


def debug_file(binary: str, roots: Sequence[str] = DEBUG_ROOTS) -> str:
    """The installed separate debug symbols of binary ('' when there are none)."""
    ident = build_id(binary)
    if len(ident) < 3:
        return ""
    for root in roots:
        path = os.path.join(root, ".build-id", ident[:2], ident[2:] + ".debug")
        if os.path.isfile(path):
            return path
    return ""


def report_complete(frames: Sequence[str]) -> bool:
    """Does a crash report's stack (function names, innermost first) reach its thread's
    start (``start_thread``, ``clone3``, ``main``...)?"""
    return bool(frames) and any(f in THREAD_STARTS for f in frames[-3:])
