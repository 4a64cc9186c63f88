#!/usr/bin/env python3
"""Check FMPL's Spack recipe without Spack.

    packaging/spack/check-recipe.py [--recipe PATH] [--source DIR]

Loads packages/fmpl/package.py with a small stand-in for Spack's
`spack.package` module that records the directives, then checks:
  - the repository layout `spack repo add` reads (repo.yaml, packages/fmpl);
  - versions without placeholder checksums, provides("mpi@:4.0"), the
    variants and their defaults, the conflicts that keep unimplemented
    variants from being silently ignored;
  - cmake_args() for +pmix and ~pmix, and that each FMPL_* variable it sets
    is an option or cache variable of FMPL's CMake files (a renamed option
    breaks this check, not a user's build);
  - the environment hooks: MPICC/MPICXX for dependents and `spack load`,
    MPICC_CC/MPICXX_CXX (the variables tools/wrappers reads) pointing at
    Spack's compiler wrappers, no Fortran wrapper while there is none, and
    spec.mpicc/spec.mpicxx;
  - that the wrappers filtered after install are the ones FMPL installs.
It checks the recipe's logic, not Spack's behaviour: packaging/spack/README.md
tells how it was tried with Spack itself.  Exit status 0 when every check
passes; the last line is 'N passed, N failed'.
"""

import argparse
import importlib.util
import os
import re
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
# Loading the recipe must leave no __pycache__ in the source tree.
sys.dont_write_bytecode = True


# --------------------------------------------------------------------------
# A stand-in for spack.package: records directives, builds -D arguments the
# way Spack's CMakeBuilder.define does.


class Recorder:
    def __init__(self):
        self.versions = []
        self.variants = {}
        self.provides = []
        self.depends_on = []
        self.conflicts = []
        self.filtered = []


REC = Recorder()


def _version(name, *args, **kwargs):
    REC.versions.append((name, args, kwargs))


def _variant(name, default=None, description="", values=None, multi=None, **kwargs):
    REC.variants[name] = {
        "default": default,
        "description": description,
        "values": values,
        "multi": multi,
    }


def _provides(*specs, **kwargs):
    REC.provides.extend((s, kwargs.get("when")) for s in specs)


def _depends_on(spec, **kwargs):
    REC.depends_on.append((spec, kwargs))


def _conflicts(spec, when=None, msg=None):
    REC.conflicts.append((spec, when, msg))


def _filter_compiler_wrappers(*files, **kwargs):
    REC.filtered.append((files, kwargs))


def _run_after(*phases, **kwargs):
    return lambda f: f


def _join_path(*parts):
    return os.path.join(*parts)


class Prefix(str):
    """A path whose attributes are subdirectories (prefix.bin, prefix.lib)."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return Prefix(os.path.join(self, name))


class Spec:
    """Enough of a concrete spec: variants, satisfies(), spec["dep"]."""

    def __init__(self, variants, deps=None, prefix="/opt/fmpl"):
        self.variants = variants
        self.deps = deps or {}
        self.prefix = Prefix(prefix)

    def satisfies(self, constraint):
        constraint = constraint.strip()
        m = re.fullmatch(r"([+~])(\w+)", constraint)
        if m:
            return bool(self.variants[m.group(2)]) == (m.group(1) == "+")
        m = re.fullmatch(r"(\w+)=(\w+)", constraint)
        if m:
            return self.variants[m.group(1)] == m.group(2)
        raise ValueError("stand-in satisfies() does not understand %r" % constraint)

    def __getitem__(self, name):
        return self.deps[name]


class CMakePackage:
    run_tests = False  # Spack sets it from `spack install --test`

    def __init__(self, spec):
        self.spec = spec
        self.prefix = spec.prefix

    @staticmethod
    def define(name, value):
        if isinstance(value, bool):
            return "-D%s:BOOL=%s" % (name, "ON" if value else "OFF")
        if isinstance(value, (list, tuple)):
            return "-D%s:STRING=%s" % (name, ";".join(str(v) for v in value))
        return "-D%s:STRING=%s" % (name, value)

    def define_from_variant(self, name, variant):
        return self.define(name, self.spec.variants[variant])


class Env:
    """Records EnvironmentModifications.set/unset/prepend_path."""

    def __init__(self):
        self.vars = {}

    def set(self, name, value, **kwargs):
        self.vars[name] = value

    def unset(self, name, **kwargs):
        self.vars.pop(name, None)

    def prepend_path(self, name, value, **kwargs):
        self.vars.setdefault(name, value)

    append_path = prepend_path


class InstallError(Exception):
    pass


def _unavailable(*args, **kwargs):
    raise RuntimeError("not available in the stand-in for spack.package")


def load_recipe(path):
    pkg_module = types.ModuleType("spack.package")
    for name, value in {
        "CMakePackage": CMakePackage,
        "version": _version,
        "variant": _variant,
        "provides": _provides,
        "depends_on": _depends_on,
        "conflicts": _conflicts,
        "filter_compiler_wrappers": _filter_compiler_wrappers,
        "run_after": _run_after,
        "join_path": _join_path,
        "InstallError": InstallError,
        "find_libraries": _unavailable,
        "which": _unavailable,
    }.items():
        setattr(pkg_module, name, value)
    spack_module = types.ModuleType("spack")
    spack_module.package = pkg_module
    sys.modules["spack"] = spack_module
    sys.modules["spack.package"] = pkg_module
    spec = importlib.util.spec_from_file_location("fmpl_spack_recipe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print("ok   %s" % what)
        else:
            self.failed += 1
            print("FAIL %s%s" % (what, (": " + detail) if detail else ""))


def cmake_cache_names(source):
    """option() names and CACHE variables of FMPL's CMake files."""
    names = set()
    files = [os.path.join(source, "CMakeLists.txt")]
    cmake_dir = os.path.join(source, "cmake")
    if os.path.isdir(cmake_dir):
        files += [
            os.path.join(cmake_dir, f) for f in os.listdir(cmake_dir) if f.endswith(".cmake")
        ]
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        names.update(re.findall(r"\boption\(\s*(\w+)", text))
        names.update(re.findall(r"\bset\(\s*(\w+)\s[^)]*\bCACHE\b", text))
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recipe", default=os.path.join(HERE, "packages", "fmpl", "package.py"))
    ap.add_argument(
        "--source",
        default=os.path.dirname(os.path.dirname(HERE)),
        help="FMPL's source tree (default: two levels above this script)",
    )
    args = ap.parse_args()
    c = Checks()

    # Layout that `spack repo add packaging/spack` reads (Package API v1).
    repo_yaml = os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(args.recipe))), "repo.yaml"
    )
    text = open(repo_yaml, encoding="utf-8").read() if os.path.exists(repo_yaml) else ""
    c.check(
        re.search(r"^repo:\s*\n\s+namespace:\s*['\"]?fmpl\b", text, re.M) is not None,
        "repo.yaml beside packages/ declares namespace fmpl",
        repo_yaml,
    )
    c.check(
        os.path.basename(os.path.dirname(args.recipe)) == "fmpl"
        and os.path.basename(os.path.dirname(os.path.dirname(args.recipe))) == "packages",
        "recipe is packages/fmpl/package.py",
    )

    try:
        module = load_recipe(args.recipe)
    except Exception as e:  # a syntax or import error: nothing else to check
        c.check(False, "recipe loads with the stand-in spack.package", repr(e))
        print("%d passed, %d failed" % (c.passed, c.failed))
        return 1
    Fmpl = getattr(module, "Fmpl", None)
    c.check(isinstance(Fmpl, type) and issubclass(Fmpl, CMakePackage), "class Fmpl(CMakePackage)")
    if not (isinstance(Fmpl, type) and issubclass(Fmpl, CMakePackage)):
        print("%d passed, %d failed" % (c.passed, c.failed))
        return 1
    c.check(bool((Fmpl.__doc__ or "").strip()), "Fmpl has a docstring (spack info shows it)")
    c.check(bool(getattr(Fmpl, "git", "")), "Fmpl.git is set (version('main') clones it)")

    # Versions: a branch, commit or tag, or a real sha256 (no placeholder).
    c.check(
        any(v[0] == "main" and v[2].get("branch") == "main" for v in REC.versions),
        'version("main", branch="main")',
    )
    for name, vargs, kw in REC.versions:
        sha = kw.get("sha256") or (vargs[0] if vargs else None)
        ok = any(k in kw for k in ("branch", "commit", "tag")) or (
            bool(sha) and re.fullmatch(r"[0-9a-f]{64}", sha) is not None and len(set(sha)) > 4
        )
        c.check(ok, "version %s has a branch/commit/tag or a real sha256" % name)

    c.check(("mpi@:4.0", None) in REC.provides, 'provides("mpi@:4.0")', str(REC.provides))

    variants = REC.variants
    c.check(variants.get("pmix", {}).get("default") is True, "variant pmix, default on")
    c.check(variants.get("fortran", {}).get("default") is True, "variant fortran, default on")
    c.check(
        any(d[0] == "fortran" and d[1].get("when") == "+fortran" for d in REC.depends_on),
        'depends_on("fortran", when="+fortran")',
    )
    fab = variants.get("fabrics", {})
    c.check(
        fab.get("default") == "shm" and "ofi" in (fab.get("values") or ()),
        "variant fabrics (shm default, ofi declared)",
    )
    c.check(
        any(d[0].startswith("pmix") and d[1].get("when") == "+pmix" for d in REC.depends_on),
        'depends_on("pmix...", when="+pmix")',
    )
    for lang in ("c", "cxx"):
        c.check(
            any(d[0] == lang for d in REC.depends_on),
            'depends_on("%s") (compilers are dependencies in Spack 1.x)' % lang,
        )

    # What FMPL lacks must conflict, with a message (not be silently ignored).
    def conflicting(spec):
        return [m for s, w, m in REC.conflicts if s == spec and w is None and m]

    c.check(bool(conflicting("fabrics=ofi")), "fabrics=ofi conflicts, with a message")

    # cmake_args for both pmix values.
    options = cmake_cache_names(args.source)
    pmix = Spec({}, prefix="/opt/pmix")
    for pmix_on in (True, False):
        spec = Spec(
            {
                "pmix": pmix_on,
                "debug": False,
                "fortran": False,
                "fabrics": "shm",
                "build_type": "RelWithDebInfo",
            },
            deps={"pmix": pmix} if pmix_on else {},
        )
        cmargs = Fmpl(spec).cmake_args()
        want = "-DFMPL_PMIX:BOOL=%s" % ("ON" if pmix_on else "OFF")
        c.check(
            want in cmargs,
            "%spmix: cmake_args has %s" % ("+" if pmix_on else "~", want),
            str(cmargs),
        )
        has_root = "-DFMPL_PMIX_ROOT:STRING=/opt/pmix" in cmargs
        c.check(
            has_root == pmix_on,
            "%spmix: FMPL_PMIX_ROOT %s"
            % ("+" if pmix_on else "~", "is the pmix prefix" if pmix_on else "is not set"),
            str(cmargs),
        )
        for arg in cmargs:
            m = re.match(r"-D(FMPL_\w+)[:=]", arg)
            if m:
                c.check(
                    m.group(1) in options,
                    "%s is an option or cache variable of FMPL's CMake files" % m.group(1),
                )

    # Environment hooks.
    spec = Spec(
        {"pmix": True, "debug": False, "fortran": False, "fabrics": "shm"},
        deps={"pmix": pmix},
        prefix="/opt/fmpl",
    )
    pkg = Fmpl(spec)
    dep_module = types.SimpleNamespace(spack_cc="/spack/env/cc", spack_cxx="/spack/env/c++")
    dependent = types.SimpleNamespace(package=types.SimpleNamespace(module=dep_module))
    env = Env()
    pkg.setup_dependent_build_environment(env, dependent)
    c.check(
        env.vars.get("MPICC") == "/opt/fmpl/bin/mpicc"
        and env.vars.get("MPICXX") == "/opt/fmpl/bin/mpicxx",
        "dependent build env: MPICC, MPICXX are the installed wrappers",
        str(env.vars),
    )
    c.check(
        env.vars.get("MPICC_CC") == "/spack/env/cc"
        and env.vars.get("MPICXX_CXX") == "/spack/env/c++",
        "dependent build env: MPICC_CC/MPICXX_CXX are Spack's compiler wrappers",
        str(env.vars),
    )
    c.check(
        not any(k in env.vars for k in ("MPIF77", "MPIF90", "MPIFC")),
        "~fortran: no Fortran wrapper variables",
        str(env.vars),
    )
    env = Env()
    pkg.setup_run_environment(env)
    c.check(
        env.vars.get("MPICC") == "/opt/fmpl/bin/mpicc",
        "run env (spack load): MPICC",
        str(env.vars),
    )
    pkg.setup_dependent_package(dep_module, dependent)
    c.check(
        getattr(spec, "mpicc", None) == "/opt/fmpl/bin/mpicc"
        and getattr(spec, "mpicxx", None) == "/opt/fmpl/bin/mpicxx",
        "setup_dependent_package: spec.mpicc, spec.mpicxx",
    )
    c.check(not hasattr(spec, "mpifc"), "~fortran: no spec.mpifc")

    # The recipe and FMPL's wrappers agree on names.
    wrappers_cmake = os.path.join(args.source, "tools", "wrappers", "CMakeLists.txt")
    wtext = open(wrappers_cmake, encoding="utf-8").read() if os.path.exists(wrappers_cmake) else ""
    for var in ("MPICC_CC", "MPICXX_CXX"):
        c.check(var in wtext, "tools/wrappers reads %s" % var)
    filtered = set(f for files, kw in REC.filtered for f in files)
    installed = set(re.findall(r'"(mpi\w+)\|', wtext))
    c.check(
        bool(installed) and installed <= filtered,
        "filter_compiler_wrappers covers the installed wrappers %s" % sorted(installed),
        "filtered: %s" % sorted(filtered),
    )

    print("%d passed, %d failed" % (c.passed, c.failed))
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
