"""Loading a library, with sdfgc's own message when it needs MPI that the
process lacks.

A library of an SDFG with MPI library nodes calls MPI. Built with MPI's
compiler wrapper (`mpicxx`, or `sdfgc.build` / `SDFGC_DACE=1`, which add
its flags) it links `libmpi` and loads anywhere MPI is installed. Built
without MPI's link flags it loads only into a process that has loaded MPI
already (mpi4py does, with RTLD_GLOBAL); elsewhere the loader says
`undefined symbol: ompi_mpi_double`. `mpi_load_error` turns that (and a
missing `libmpi.so.N`) into a message that names the program, the MPI
library the file needs and how to build or load it. The library is
recognised as calling MPI by its dynamic symbols (`MPI_*`, Open MPI's
`ompi_*`), read from the ELF file itself: sdfgc's MPI code always calls
`MPI_Initialized` in `__dace_init_<name>`.
"""

import ctypes
import os
import re
import struct

from ._binary import SdfgcError


class MpiLoadError(SdfgcError):
    """A library that calls MPI cannot be loaded: MPI is not linked into it
    and not loaded in the process, or the MPI library it links is missing."""


def elf_dynamic(path):
    """(needed libraries, undefined dynamic symbols) of a 64-bit
    little-endian ELF shared library; None when the file is not one."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    try:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        sections = []
        for i in range(shnum):
            name, kind, _flags, _addr, offset, size, link, _info, _align, entsize = struct.unpack_from(
                "<IIQQQQIIQQ", data, shoff + i * shentsize)
            sections.append((kind, offset, size, link, entsize))

        def string(table, at):
            start = sections[table][1] + at
            return data[start:data.index(b"\0", start)].decode(errors="replace")

        needed, undefined = [], []
        for kind, offset, size, link, entsize in sections:
            if kind == 6:  # SHT_DYNAMIC: DT_NEEDED entries
                for at in range(offset, offset + size, entsize or 16):
                    tag, val = struct.unpack_from("<qQ", data, at)
                    if tag == 0:
                        break
                    if tag == 1:
                        needed.append(string(link, val))
            elif kind == 11:  # SHT_DYNSYM: symbols with section index 0 are undefined
                for at in range(offset + (entsize or 24), offset + size, entsize or 24):
                    st_name, _info, _other, shndx = struct.unpack_from("<IBBH", data, at)
                    if shndx == 0 and st_name:
                        undefined.append(string(link, st_name))
        return needed, undefined
    except (struct.error, ValueError, IndexError):
        return None


_MPI_SYMBOL = re.compile(r"^(P?MPI_|ompi_|mpi_|MPIR_|MPID_)")
_MPI_LIB = re.compile(r"^lib(mpi|mpich|mpi_cxx|mpicxx|mpifort)[._-]")


def mpi_needs(path):
    """(MPI symbols the library leaves undefined, MPI libraries it links,
    MPI implementation's name) or None when it calls no MPI."""
    found = elf_dynamic(path)
    if found is None:
        return None
    needed, undefined = found
    symbols = sorted(s for s in undefined if _MPI_SYMBOL.match(s))
    if not symbols:
        return None
    libs = [n for n in needed if _MPI_LIB.match(n)]
    if any(s.startswith("ompi_") for s in symbols) or "libmpi.so.40" in libs:
        impl = "Open MPI"
    elif any(n.startswith(("libmpich", "libmpi.so.12")) for n in libs):
        impl = "MPICH"
    else:
        impl = "an MPI library"
    return symbols, libs, impl


def mpi_load_error(path, program=None, loader_error=""):
    """sdfgc's message for a library `path` (of SDFG `program`) that calls
    MPI and failed to load with `loader_error`; None when the library calls
    no MPI (the loader's own message is then the one to show)."""
    needs = mpi_needs(path)
    if needs is None:
        return None
    symbols, libs, impl = needs
    who = f"library {path}" + (f" of program '{program}'" if program else "")
    shown = ", ".join(symbols[:4]) + (", ..." if len(symbols) > 4 else "")
    loader = f" (the loader: {loader_error.strip()})" if loader_error else ""
    if libs and "undefined symbol" in loader_error:
        cause = (f"the MPI library it finds lacks a symbol it needs{loader}: it was built against another MPI "
                 f"({impl}, {', '.join(libs)}) than the one loaded; rebuild it with this machine's MPI (mpicxx), or "
                 f"run it with the MPI it was built with (LD_LIBRARY_PATH, mpirun of that MPI)")
    elif libs:
        missing = [n for n in libs if n in loader_error] or libs
        cause = (f"it links {impl}'s {', '.join(missing)}, which the loader cannot find{loader}: install that MPI "
                 f"(e.g. Debian's openmpi-bin libopenmpi-dev) or put the folder of {missing[0]} on "
                 f"LD_LIBRARY_PATH, or rebuild the library with this machine's MPI (mpicxx)")
    else:
        cause = (f"it is not linked with MPI, and no MPI library is loaded in this process{loader}. "
                 f"It needs {impl} ({shown}). Rebuild it with MPI's compiler wrapper, "
                 f"`mpicxx -std=c++17 -O2 -fopenmp -fPIC -shared {program or '<program>'}.cpp "
                 f"-o lib{program or '<program>'}.so` "
                 f"(sdfgc.build and SDFGC_DACE=1 add mpicxx's flags themselves), or load MPI before it: "
                 f"`from mpi4py import MPI` first, or LD_PRELOAD=libmpi.so; and run it under `mpirun -np N`")
    return f"{who} calls MPI, but {cause}"


def load_library(path, program=None, mode=None):
    """`ctypes.CDLL(path)`; a library that calls MPI and cannot be loaded
    raises `MpiLoadError` with sdfgc's message (see `mpi_load_error`)."""
    try:
        return ctypes.CDLL(path) if mode is None else ctypes.CDLL(path, mode=mode)
    except OSError as e:
        message = mpi_load_error(path, program, str(e))
        if message is None:
            raise
        raise MpiLoadError(message) from e


def diagnose(path, program=None):
    """After a failed load through DaCe's stub (which keeps the loader's
    message to itself): loads `path` once more with ctypes to get it, and
    returns sdfgc's MPI message, or None when MPI is not the reason."""
    if not path or mpi_needs(path) is None:
        return None
    try:
        ctypes.CDLL(path, mode=getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 2))
    except OSError as e:
        return mpi_load_error(path, program, str(e))
    return None  # it loads: MPI was not the reason
