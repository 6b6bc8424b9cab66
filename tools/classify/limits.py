"""Bounds on what one analysed file can make the classifier compute, checked *before* the work is done.

One line of valid Python can ask for unbounded work: `9 ** 9 ** 9` (a billion-bit integer), `'a' * 10**10`
(10 GB), 800 chained classes (a cubic MRO). The interpreter folds constants and linearises class
hierarchies, so every such operation asks here first. Past a bound it raises `TooLarge`; the interpreter
turns that into an `unknown` finding with the reason at the line that asked (`ev`, `exec_block`), and a
bound hit outside any expression makes the whole file `unknown` with the reason (runner). The bounds are
far above anything real test code builds (the ten real suites of docs/classifier-accuracy.md never reach
them) and far below what would cost noticeable time or memory.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Hashable, Sequence

MAX_INT_BITS = 8_192  # a folded int (~2,466 decimal digits: always printable, see sys.get_int_max_str_digits)
MAX_TEXT_LENGTH = 1 << 20  # characters (bytes) of a str (bytes) the interpreter builds
MAX_MRO_LENGTH = 256  # classes in one method resolution order (real hierarchies: a few dozen)


class TooLarge(Exception):  # noqa: N818 - a bound of the analysis, not an error in the analysed code
    """An operation that would build a value or structure past a bound; the message says which."""


def _bits(x: object) -> int | None:
    return x.bit_length() if isinstance(x, int) else None


def _length(x: object) -> int | None:
    return len(x) if isinstance(x, (str, bytes)) else None


_FORMAT_NUMBER = re.compile(r"%[-#0 +]*(\d*)(?:\.(\d*))?")


def _format_widths(fmt: str | bytes) -> int:
    """The largest width or precision a printf-style format asks for (`'%0999999999d'`)."""
    text = fmt.decode("latin-1") if isinstance(fmt, bytes) else fmt
    widest = 0
    for m in _FORMAT_NUMBER.finditer(text):
        for g in m.groups():
            if g:
                if len(g) > 9:
                    return MAX_TEXT_LENGTH + 1
                widest = max(widest, int(g))
    return widest


def result_size(op: type[ast.operator], a: object, b: object) -> tuple[str, int, int] | None:
    """(what, size, limit) of `a <op> b` for int/str/bytes operands, estimated without computing it; None
    when the operation cannot build a large value."""
    ba, bb, la, lb = _bits(a), _bits(b), _length(a), _length(b)
    if op is ast.Pow and ba is not None and bb is not None and bb > 0 and abs(a) > 1:  # type: ignore[arg-type]
        return "bits", ba * b, MAX_INT_BITS  # type: ignore[operator]
    if op is ast.LShift and ba is not None and bb is not None and b > 0 and a != 0:  # type: ignore[operator]
        return "bits", ba + b, MAX_INT_BITS  # type: ignore[operator]
    if op is ast.Mult:
        if ba is not None and bb is not None:
            return "bits", ba + bb, MAX_INT_BITS
        if la is not None and bb is not None:
            return "characters", la * max(b, 0), MAX_TEXT_LENGTH  # type: ignore[call-overload]
        if lb is not None and ba is not None:
            return "characters", lb * max(a, 0), MAX_TEXT_LENGTH  # type: ignore[call-overload]
    if op in (ast.Add, ast.Sub) and ba is not None and bb is not None:
        return "bits", max(ba, bb) + 1, MAX_INT_BITS
    if op is ast.Add and la is not None and lb is not None:
        return "characters", la + lb, MAX_TEXT_LENGTH
    if op is ast.Mod and isinstance(a, (str, bytes)):
        extra = len(b) if isinstance(b, (str, bytes)) else 0
        return "characters", len(a) + _format_widths(a) + extra, MAX_TEXT_LENGTH
    return None


_OP_TEXT = {ast.Pow: "**", ast.LShift: "<<", ast.Mult: "*", ast.Add: "+", ast.Sub: "-", ast.Mod: "%"}


def check_binop(op: type[ast.operator], a: object, b: object) -> None:
    """Raise TooLarge when `a <op> b` would be past a bound (before anything is computed)."""
    got = result_size(op, a, b)
    if got is not None and got[1] > got[2]:
        what, size, limit = got
        raise TooLarge(f"constant folding bound: {_short(a)} {_OP_TEXT.get(op, '?')} {_short(b)} would have "
                       f"about {size:,} {what} (limit {limit:,}); the value is not computed")


def check_text(length: int, what: str) -> None:
    """Raise TooLarge when a string the interpreter is about to build (`what`) would be too long."""
    if length > MAX_TEXT_LENGTH:
        raise TooLarge(f"value size bound: {what} would have {length:,} characters (limit {MAX_TEXT_LENGTH:,})")


def check_str_method(s: str, name: str, args: Sequence[object]) -> None:
    """Raise TooLarge when `s.<name>(*args)` would build a string past the bound (only `replace` grows)."""
    if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        grow = max(0, len(args[1]) - len(args[0]))
        check_text(len(s) + (len(s) + 1) * grow, f"{_short(s)}.replace({_short(args[0])}, {_short(args[1])})")


def text(value: object) -> str:
    """str(value) for a constant, or TooLarge where that string cannot be made (an int past Python's digit
    limit) or would be past the text bound."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise TooLarge(f"value size bound: an int of {value.bit_length():,} bits is not converted to text "
                       f"(limit {MAX_INT_BITS:,} bits)")
    out = str(value)
    check_text(len(out), "a converted constant")
    return out


def printable(value: object) -> str | None:
    """str(value), or None when that string cannot or should not be made (see `text`)."""
    try:
        return text(value)
    except (TooLarge, ValueError):
        return None


def check_mro_length(name: str, length: int) -> None:
    if length > MAX_MRO_LENGTH:
        raise TooLarge(f"class hierarchy bound: the MRO of {name} has more than {MAX_MRO_LENGTH} classes")


def c3_merge(head: Hashable, seqs: Sequence[Sequence[Hashable]], name: str) -> list[Hashable]:
    """C3 linearisation `[head] + merge(seqs)` in time linear in the input (each candidate's presence in a
    tail is counted, not searched), bounded by MAX_MRO_LENGTH; an inconsistent hierarchy falls back to
    depth-first order (Python would refuse the class; the analysis keeps going)."""
    for s in seqs:
        check_mro_length(name, len(s) + 1)
    lists = [list(s) for s in seqs if s]
    starts = [0] * len(lists)
    in_tail: dict[Hashable, int] = {}
    for s in lists:
        for c in s[1:]:
            in_tail[c] = in_tail.get(c, 0) + 1
    out: list[Hashable] = [head]
    while True:
        live = [i for i in range(len(lists)) if starts[i] < len(lists[i])]
        if not live:
            return out
        for i in live:
            cand = lists[i][starts[i]]
            if not in_tail.get(cand):
                break
        else:  # inconsistent: the rest in depth-first order
            seen = set(out)
            for i in live:
                for c in lists[i][starts[i]:]:
                    if c not in seen:
                        seen.add(c)
                        out.append(c)
                        check_mro_length(name, len(out))
            return out
        out.append(cand)
        check_mro_length(name, len(out))
        for i in live:
            if lists[i][starts[i]] == cand:
                starts[i] += 1
                if starts[i] < len(lists[i]):
                    nxt = lists[i][starts[i]]
                    in_tail[nxt] -= 1  # (the new head is no longer in this list's tail)


def _short(x: object) -> str:
    if isinstance(x, (str, bytes)):
        return f"<{type(x).__name__} of {len(x):,}>" if len(x) > 20 else repr(x)
    if isinstance(x, int) and x.bit_length() > 64:
        return f"<int of {x.bit_length():,} bits>"
    return repr(x) if sys.getsizeof(x) < 200 else f"<{type(x).__name__}>"
