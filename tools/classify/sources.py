"""The repository's modules as the classifier reads them: bytes, syntax trees, imports and conftests.

The interpreter reads code only through this (interp_base.ModuleSource); the import graph it keeps decides
which files a result depends on (the cache key) and whether running a test file imports torch.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tools.bounded_read import MAX_FILE_BYTES, read_source
from tools.classify import registries
from tools.classify.datafiles import LISTING_PREFIX, read_data, read_listing
from tools.classify.installed import (
    InstalledIndex,
    absolute_name,
    is_installed,
    module_name,
    running_python_dirs,
    top_package,
)
from tools.classify.modules import (
    ImportSpec,
    ParsedModule,
    RepoIndex,
    digest_of,
    is_test_file,
    is_torch_module,
    parse_source,
    scan_module,
)
from tools.classify.optional_imports import PRESENCE_PREFIX, presence
from tools.classify.plugins import VIRTUAL_SOURCES

EXCLUDED_ROOTS = frozenset({"torch"})  # never follow into a checkout of torch itself


class Sources:
    """The modules of one root, parsed when first needed; implements the ModuleSource the interpreter reads
    from, and the import closure of each file."""

    def __init__(self, root: Path, files: list[str] | RepoIndex, sources: dict[str, bytes] | None = None,
                 max_file_bytes: int = MAX_FILE_BYTES, installed: InstalledIndex | None = None) -> None:
        self.root = root
        # test base modules of installed packages (installed.py), looked up on this Python's sys.path
        self.installed = installed if installed is not None else InstalledIndex(running_python_dirs(root),
                                                                                max_file_bytes)
        self.max_file_bytes = max_file_bytes  # larger files are not read (`unknown`, with the reason)
        self.index = files if isinstance(files, RepoIndex) else RepoIndex(files)  # an index can be shared
        self.sources = sources if sources is not None else {}
        self.parsed: dict[str, ParsedModule] = {}
        self.released: set[str] = set()  # parsed once, then let go (release)
        self.parse_errors: list[tuple[str, str]] = []  # (file, reason) per module that failed to parse, in order
        self.read_from_disk: list[str] = []  # modules not in `sources`, read when first needed
        self.source_lines: dict[str, list[bytes] | None] = {}
        self.closures: dict[str, frozenset[str]] = {}
        self.import_time: dict[str, tuple[str, ...]] = {}  # module -> import_time_closure
        self.importers: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}  # importers_naming
        # data files (datafiles.py) read by the analysis: (bytes or None, state) per file, and per module the
        # files its code read (a dependency of every result that depends on the module)
        self.data: dict[str, tuple[bytes | None, str]] = {}
        self.data_readers: dict[str, set[str]] = {}
        # directories listed (datafiles.read_listing): (entries or None, state), by LISTING_PREFIX + rel; their
        # readers are kept with the data files' (data_readers)
        self.listings: dict[str, tuple[tuple[tuple[str, bool], ...] | None, str]] = {}
        # optional_imports.presence by top-level module name, and the modules whose code asked, by module
        self.presence: dict[str, str] = {}
        self.presence_readers: dict[str, set[str]] = {}

    # -- ModuleSource ------------------------------------------------------------------------------
    def module(self, rel: str) -> ParsedModule:
        got = self.parsed.get(rel)
        if got is not None:
            return got
        data = self.sources.get(rel) or VIRTUAL_SOURCES.get(rel)
        err = None
        if data is None and is_installed(rel):
            data, err = self.installed.read(rel)
        elif data is None:
            data, err = read_source(self.root, rel, self.max_file_bytes)
            self.read_from_disk.append(rel)
            if data is not None:
                self.sources[rel] = data  # (for lines_of, and parsing again after release)
        if data is None:
            pm = ParsedModule(rel, "", None, err)
        else:
            tree, perr = parse_source(rel, data)
            if tree is None:
                pm = ParsedModule(rel, digest_of(data), None, perr)
            else:
                try:
                    imports, defs = scan_module(tree)
                    pm = ParsedModule(rel, digest_of(data), tree, None, imports, defs)
                except RecursionError:
                    pm = ParsedModule(rel, digest_of(data), None, "expression nesting too deep to analyse")
        if rel in self.released and pm.tree is not None:
            # Parsed again after release(): lambdas are indexed by the interpreter when it meets them, and
            # values made from the first tree may refer to any of them.
            pm.defs.update(((n.lineno, n.col_offset), n) for n in ast.walk(pm.tree) if isinstance(n, ast.Lambda))
        elif pm.error is not None:
            self.parse_errors.append((rel, pm.error))
        self.parsed[rel] = pm
        return pm

    def release(self, rel: str) -> None:
        """Forget rel's syntax tree and source lines (a test file, once classified: other files seldom import
        it, and a cold run over a large tree would otherwise hold every tree until it ends). Everything the
        analysis keeps refers to code by (file, line, column), so a later use parses rel again and finds the
        same definitions."""
        pm = self.parsed.get(rel)
        if pm is not None and pm.tree is not None:
            del self.parsed[rel]
            self.released.add(rel)
        self.source_lines.pop(rel, None)

    def lines_of(self, rel: str) -> list[bytes] | None:
        if rel not in self.source_lines:
            data = (self.sources.get(rel) or VIRTUAL_SOURCES.get(rel)
                    or (self.installed.read(rel) if is_installed(rel) else
                        read_source(self.root, rel, self.max_file_bytes))[0])
            self.source_lines[rel] = data.splitlines(keepends=True) if data is not None else None
        return self.source_lines[rel]


    def resolve_import(self, dotted: str, importer: str, level: int, module: str) -> str | None:
        """The module file an import loads, when the analysis reads it: the repository's, else a module of a
        small installed library (installed.py; test base modules of installed packages are reached as class
        bases instead, ClassesMixin.installed_base). None: external."""
        if is_installed(importer):
            return self._library_module(dotted if not level else absolute_name(importer, level, module), importer)
        if level:
            return self.index.resolve_relative_file(ImportSpec(module, level, ()), importer)
        top = dotted.split(".", 1)[0]
        if top in EXCLUDED_ROOTS:
            return None
        got = self.index.resolve_module(dotted, importer)
        if got is None and not self.index.is_package_dir(top):
            lib = self.installed.module(dotted)
            if lib is not None and not self.installed.holds_tests(lib):
                return lib
        return got

    def module_name(self, rel: str) -> str:
        """The name Python gives module rel (a class's `__module__`): dotted from its base directory, as pytest
        imports it (RepoIndex.package_of); an installed module's from its sys.path directory."""
        if is_installed(rel):
            return module_name(rel)
        package = self.index.package_of(rel)
        stem = rel.rsplit("/", 1)[-1][:-3]
        if stem == "__init__":
            return package or stem
        return f"{package}.{stem}" if package else stem

    def on_pytest_path(self, dotted: str, importer: str) -> bool:
        return dotted.split(".", 1)[0] not in EXCLUDED_ROOTS and self.index.on_pytest_path(dotted, importer)

    def is_package_dir(self, dotted: str) -> bool:
        return dotted.split(".", 1)[0] not in EXCLUDED_ROOTS and self.index.is_package_dir(dotted)

    def package_inits(self, rel: str) -> tuple[str, ...]:
        return self.installed.package_inits(rel) if is_installed(rel) else self.index.package_inits(rel)

    def conftests_for(self, rel: str) -> tuple[str, ...]:
        return self.index.conftests_for(rel)

    # -- dependencies ------------------------------------------------------------------------------
    def direct_deps(self, rel: str) -> list[str]:
        pm = self.module(rel)
        out: set[str] = set()
        for spec in pm.imports:
            if spec.level == 0 and spec.module.split(".", 1)[0] in EXCLUDED_ROOTS:
                continue
            out.update(self.dep_files(spec, rel))
        out.discard(rel)
        return sorted(out)

    def dep_files(self, spec: ImportSpec, importer: str) -> list[str]:
        """Files an import statement may load: in the repository (RepoIndex.dep_files), else installed test
        base and small-library modules (installed.py), whose contents are then part of every result key that
        depends on importer. Imports in an installed module resolve among installed modules only: test modules,
        and the modules of its own library (the code the analysis follows from it, see resolve_import)."""
        if is_installed(importer):
            dotted = absolute_name(importer, spec.level, spec.module) if spec.level else spec.module
            return [f for f in self._installed_files(dotted, spec.names)
                    if self.installed.holds_tests(f) or top_package(f) == top_package(importer)]
        got = self.index.dep_files(spec, importer)
        if got or spec.level:
            return got
        return self._installed_files(spec.module, spec.names)

    def _installed_files(self, dotted: str, names: tuple[str, ...]) -> list[str]:
        cands = (dotted, *(f"{dotted}.{n}" for n in names if n != "*"))
        found = [f for f in (self.installed.module(c) for c in cands if c) if f is not None]
        return [*found, *(i for f in found for i in self.installed.package_inits(f))]

    def _library_module(self, dotted: str, importer: str) -> str | None:
        """The installed module an import in installed module `importer` loads, when the analysis follows it: a
        module of the importer's own package (a library's code calling itself); another package's stays
        external, as it is for repository code."""
        rel = self.installed.module(dotted) if dotted else None
        return rel if rel is not None and top_package(rel) == top_package(importer) else None

    def installed_class_module(self, dotted: str, importer: str) -> str | None:
        """The installed test base module `dotted` (a class base's module), when the file of the class
        (importer) depends on it: only such files are part of its results' keys."""
        rel = self.installed.module(dotted)
        return rel if rel is not None and rel in self.closure(importer) else None

    def closure(self, rel: str) -> frozenset[str]:
        """rel and every in-repo module it imports, transitively (iterative: cycles are fine)."""
        got = self.closures.get(rel)
        if got is not None:
            return got
        seen = {rel}
        todo = [rel]
        while todo:
            cur = todo.pop()
            for d in self.direct_deps(cur):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        result = frozenset(seen)
        self.closures[rel] = result
        return result

    def import_time_closure(self, rel: str) -> tuple[str, ...]:
        """The in-repo modules that importing `rel` runs: its packages' `__init__` files, itself, and what their
        top levels import, transitively (imports inside functions do not run at import; sorted)."""
        got = self.import_time.get(rel)
        if got is not None:
            return got
        start = (*self.index.package_inits(rel), rel)
        seen = set(start)
        todo = list(start)
        while todo:
            f = todo.pop()
            for spec in self.module(f).imports:
                if not spec.toplevel or spec.level == 0 and spec.module.split(".", 1)[0] in EXCLUDED_ROOTS:
                    continue
                for d in self.index.dep_files(spec, f):
                    if d not in seen:
                        seen.add(d)
                        todo.append(d)
        got = self.import_time[rel] = tuple(sorted(seen))
        return got

    def registering_importers(self, home: str, names: tuple[str, ...]) -> tuple[str, ...]:
        """The repository modules besides `home` whose top level imports it, directly or through a package that hands
        on its names (`_reexports`), and whose text names one of `names` as a word (a registry of home, or a function
        of home that stores into one, under any name home binds it to; `names[0]`: the registry's own name,
        registries.origin_root): what fills home's registries when pytest imports them (registries.py). A test module
        or conftest counts when its code may store into the registry (registries.may_store): pytest imports every one
        it collects before the first test runs."""
        found: list[str] = []
        for f in self.importers_naming(home, names):
            name = f.rsplit("/", 1)[-1]
            tree = self.module(f).tree
            if not (is_test_file(name) or name == "conftest.py") or tree is not None and registries.may_store(
                    tree, names[0], names[1:]):
                found.append(f)
                self.data_file(f, home)
        return tuple(found)

    def importers_naming(self, home: str, names: tuple[str, ...]) -> tuple[str, ...]:
        """The repository modules besides `home` whose top level imports it (directly or through a package that hands
        on its names, `_reexports`) and whose text names one of `names` as a word: where code that fills home's
        registries or subclasses home's classes can be; a caller records those it reads from as dependencies of code in
        home (a file that starts importing home is not: it changes no file the result already depends on). Every file
        of the repository is read once per run and home, parsed only when it names one of `names`."""
        key = (home, names)
        got = self.importers.get(key)
        if got is not None:
            return got
        named = re.compile(rb"\b(?:" + rb"|".join(re.escape(n.encode()) for n in names) + rb")\b")
        found: list[str] = []
        for f in self.index.files:
            if f == home or is_installed(f):
                continue
            data = self.sources.get(f) or read_source(self.root, f, self.max_file_bytes)[0]
            if data is None or not named.search(data):
                continue
            if any(spec.toplevel and any(d == home or self._reexports(d, home, named)
                                         for d in self.index.dep_files(spec, f)) for spec in self.module(f).imports):
                found.append(f)
        got = self.importers[key] = tuple(found)
        return got

    def _reexports(self, package: str, home: str, named: re.Pattern[bytes]) -> bool:
        """Whether a package's `__init__` hands on a name of `home` (`from .registry import register_op` in
        `backends/__init__.py`, imported as `from pkg.backends import register_op`): it imports home at its top
        level and names one of the registry's names."""
        if not package.endswith("__init__.py"):
            return False
        data = self.sources.get(package) or read_source(self.root, package, self.max_file_bytes)[0]
        return data is not None and named.search(data) is not None and any(
            spec.toplevel and home in self.index.dep_files(spec, package) for spec in self.module(package).imports)

    def imports_torch(self, rel: str) -> bool:
        """Whether running `rel` imports torch: any torch import in rel itself (test and fixture bodies
        run), and the imports that run at import time (not inside functions) of the modules it loads."""
        seen = {rel}
        todo = [rel]
        while todo:
            f = todo.pop()
            for spec in self.module(f).imports:
                if not spec.toplevel and f != rel:
                    continue
                if spec.level == 0 and is_torch_module(spec.module) and not (
                        spec.module.split(".", 1)[0] not in EXCLUDED_ROOTS
                        and self.index.resolve_module(spec.module, f)):
                    return True
                if spec.level == 0 and spec.module.split(".", 1)[0] in EXCLUDED_ROOTS:
                    continue
                for d in self.index.dep_files(spec, f):
                    if d not in seen:
                        seen.add(d)
                        todo.append(d)
        return False


    def file_deps(self, rel: str) -> list[str]:
        """The files rel's result depends on: its import closure and its conftests', with what the `__init__` of
        every package on the way imports (Python runs them first, and so does the analysis; a registry is filled
        there: registries.py) (sorted)."""
        base = set().union(self.closure(rel), *(self.closure(c) for c in self.index.conftests_for(rel)))
        inits = {i for m in base for i in self.index.package_inits(m)} - base
        return sorted(base.union(*(self.closure(i) for i in sorted(inits))))

    # -- data files --------------------------------------------------------------------------------
    def data_file(self, rel: str, reader: str) -> bytes | None:
        """The bytes of the data file rel (None: not readable as data, see datafiles.read_data), read once per
        run; code in the module `reader` read it."""
        got = self.data.get(rel)
        if got is None:
            got = self.data[rel] = read_data(self.root, rel)
        self.data_readers.setdefault(reader, set()).add(rel)
        return got[0]

    def listing(self, rel: str, reader: str) -> tuple[tuple[str, bool], ...] | None:
        """The entries of the directory rel (None: not listed, see datafiles.read_listing), listed once per run;
        code in the module `reader` listed it."""
        key = LISTING_PREFIX + rel
        got = self.listings.get(key)
        if got is None:
            got = self.listings[key] = read_listing(self.root, rel)
        self.data_readers.setdefault(reader, set()).add(key)
        return got[0]

    def external_presence(self, dotted: str, importer: str, reader: str) -> str | None:
        """Whether `import dotted` in `importer` would load an installed module that is there (PRESENT) or not
        (ABSENT), by its top-level name; None when the repository provides it when pytest runs (a file pytest finds
        under that name, or a package directory). Code in the module `reader` asked (the cache records it)."""
        top = dotted.split(".", 1)[0]
        if self.on_pytest_path(dotted, importer) or self.is_package_dir(top):
            return None
        return self.module_presence(top, reader)

    def module_presence(self, top: str, reader: str) -> str:
        """optional_imports.presence(top), looked up once per run; code in the module `reader` asked."""
        got = self.presence.get(top)
        if got is None:
            got = self.presence[top] = presence(top)
        self.presence_readers.setdefault(reader, set()).add(top)
        return got

    def data_deps(self, deps: list[str]) -> list[tuple[str, str]]:
        """(data file, state) for every data file that code in `deps` (a result's files) read in this process,
        sorted. Code reached from a test lies in its files, and what such code reads is recorded when it first
        runs (a module top level or summary reused later still counts), so this covers every file the result
        read; it may hold more (read by the same modules for other tests), which only costs a recomputation."""
        rels = set().union(*(self.data_readers.get(d, ()) for d in deps))
        tops = set().union(*(self.presence_readers.get(d, ()) for d in deps))
        return [(r, (self.listings[r] if r.startswith(LISTING_PREFIX) else self.data[r])[1]) for r in sorted(rels)] + [
            (PRESENCE_PREFIX + t, self.presence[t]) for t in sorted(tops)]
