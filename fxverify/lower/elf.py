"""Read a compiled BPF object: its program sections and the helper ids its code calls.

Takes the bytes of a ``.bpf.o`` (ELF64, ``EM_BPF``); produces, per executable section (each
program's ``SEC()`` and ``.text``, where the shared subprograms such as ``fx_exec`` live), the
helper ids its instructions call, read with pyelftools from the instruction stream: a call is
opcode ``BPF_JMP | BPF_CALL`` (0x85) with source register 0, and its immediate is the helper id
(``Documentation/bpf/standardization/instruction-set.rst``; source register 1 is a call of a
subprogram, 2 of a kernel function). ``bpftime_problems`` compares them with the bpftime support
table (``targets.bpftime_support``). Emits no diagnostics; ``driver`` reports a problem as a
lowering fact not proved (FX-BPF-007).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from fxverify.lower.targets import bpftime_support

#: ``BPF_JMP | BPF_CALL``: the opcode of a call instruction.
_CALL = 0x85
#: Instruction size in bytes (``struct bpf_insn``).
_INSN = 8


@dataclass(frozen=True)
class ObjectCalls:
    """The executable sections of one object: ``sections`` maps each section name (a program's
    ``SEC()`` name, or ``.text``) to the sorted helper ids its instructions call."""

    sections: dict[str, tuple[int, ...]]

    @property
    def programs(self) -> list[str]:
        """The program sections (every executable section but ``.text``), in file order."""
        return [s for s in self.sections if s != ".text"]

    def helpers(self) -> set[int]:
        """Every helper id the object calls, programs and subprograms together."""
        return {h for ids in self.sections.values() for h in ids}


def object_calls(obj: bytes) -> ObjectCalls:
    """The helper calls of every executable section of the BPF object ``obj``. Raises
    ``elftools.common.exceptions.ELFError`` when ``obj`` is not an ELF file."""
    elf = ELFFile(io.BytesIO(obj))
    out: dict[str, tuple[int, ...]] = {}
    for sec in elf.iter_sections():
        if sec["sh_type"] != "SHT_PROGBITS" or not sec["sh_flags"] & SH_FLAGS.SHF_EXECINSTR:
            continue
        data = sec.data()
        ids = set()
        for off in range(0, len(data) - _INSN + 1, _INSN):
            if data[off] == _CALL and data[off + 1] >> 4 == 0:
                ids.add(int.from_bytes(data[off + 4:off + 8], "little", signed=True))
        out[sec.name] = tuple(sorted(ids))
    return ObjectCalls(out)


def bpftime_problems(obj: bytes, side: str) -> list[str]:
    """What in object ``obj`` bpftime cannot run on ``side`` (``host`` or ``gpu``): a program
    section whose kind (the part before ``/``) the side does not attach, or a helper id the side
    does not implement (``bpftime_support.json``). Empty when it can run all of it."""
    table = bpftime_support()
    helpers = {int(k) for k in table["helpers"][side]["ids"]}
    kinds = set(table["sections"][side])
    calls = object_calls(obj)
    out = [f"section `{s}`: bpftime's {side} side attaches {', '.join(sorted(kinds))}, not `{s.split('/')[0]}`"
           for s in calls.programs if s.split("/")[0] not in kinds]
    for s, ids in calls.sections.items():
        out += [f"`{s}` calls helper {h}, which bpftime's {side} side does not implement" for h in ids if h not in helpers]
    return out
