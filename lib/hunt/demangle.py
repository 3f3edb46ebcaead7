"""C++ symbol names as people read them, for crash signatures.

mariadbd's crash report names frames by their mangled symbols
(``_ZN17Item_func_udf_int7val_intEv``).  :func:`demangle` turns them into
``Item_func_udf_int::val_int()`` with the C++ runtime's own demangler
(``__cxa_demangle`` in libstdc++, which every mariadbd links, called through
ctypes); a name that is not mangled, or when the library cannot be loaded,
comes back unchanged.  :func:`function_name` then drops argument lists,
``const`` and compiler clone suffixes (``.cold``, ``.isra.0``), which differ
between builds of the same code.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import re

_CLONE_SUFFIX = re.compile(r"(\.(cold|isra|part|constprop|lto_priv|localalias)(\.\d+)?)+$")


@functools.lru_cache(maxsize=1)
def _demangler() -> "ctypes._NamedFuncPointer | None":
    """libstdc++'s ``__cxa_demangle`` with its C signature, or None."""
    for name in ("libstdc++.so.6", ctypes.util.find_library("stdc++")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        func = lib.__cxa_demangle
        func.restype = ctypes.c_void_p
        func.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t),
                         ctypes.POINTER(ctypes.c_int)]
        return func
    return None


@functools.lru_cache(maxsize=1)
def _free() -> "ctypes._NamedFuncPointer | None":
    path = ctypes.util.find_library("c") or "libc.so.6"
    try:
        func = ctypes.CDLL(path).free
    except OSError:
        return None
    func.argtypes = [ctypes.c_void_p]
    func.restype = None
    return func


@functools.lru_cache(maxsize=4096)
def demangle(symbol: str) -> str:
    """The demangled C++ name of symbol, or symbol itself when it is not mangled."""
    base = _CLONE_SUFFIX.sub("", symbol)
    if not base.startswith("_Z"):
        return symbol
    func = _demangler()
    if func is None:
        return symbol
    status = ctypes.c_int(0)
    pointer = func(base.encode(), None, None, ctypes.byref(status))
    if not pointer or status.value != 0:
        return symbol
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        free = _free()
        if free is not None:
            free(pointer)


def function_name(symbol: str) -> str:
    """symbol demangled, without its argument list, ``const`` or clone suffixes:
    ``_ZNK12Type_handler18Item_send_longlongEP4Item...`` -> ``Type_handler::Item_send_longlong``."""
    name = _CLONE_SUFFIX.sub("", demangle(symbol).strip())
    name = re.sub(r"\s+const$", "", name)
    if name.endswith(")"):  # drop the outermost trailing (...) group
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            if name[i] == ")":
                depth += 1
            elif name[i] == "(":
                depth -= 1
                if depth == 0:
                    name = name[:i] if i > 0 else name
                    break
    name = re.sub(r"\s+const$", "", name.strip())
    # a return type before the name (demangled templates): keep the last word
    if " " in name and "<" not in name:
        name = name.rsplit(" ", 1)[-1]
    return _CLONE_SUFFIX.sub("", name)
