# Spack recipe for FMPL (packaging/spack/README.md tells how to use it).
#
# It lives in FMPL's own source tree, so each commit carries the recipe that
# matches its build: a variant is declared here only together with the CMake
# option it maps to, and what FMPL does not have yet is a declared variant
# that conflicts, so that asking for it fails instead of being ignored.

from spack.package import *


class Fmpl(CMakePackage):
    """FMPL: a message-passing library with its own C API (fmpl.h) and the
    MPI C API with MPICH's ABI (libmpi.so.12, mpicc, mpicxx, mpirun)."""

    # FMPL's repository has no public address yet.  Point Spack at a clone
    # with packages.yaml:
    #     packages:
    #       fmpl:
    #         package_attributes:
    #           git: file:///path/to/fmpl
    # or build a checkout with `spack develop` / `spack dev-build`.  The
    # ".invalid" addresses below never resolve (RFC 2606): fetching from them
    # fails at once rather than reaching somebody else's server.
    homepage = "https://fmpl.invalid/"
    git = "https://fmpl.invalid/fmpl.git"

    # No release has been tagged yet, so there is no tarball to checksum:
    # the only version is the branch.
    version("main", branch="main")

    # MPI-4.0 C API; MPICH's ABI (programs built with MPICH run unchanged).
    provides("mpi@:4.0")

    variant(
        "pmix",
        default=True,
        description="PMIx bootstrap, so that jobs started by Open MPI's mpirun "
        "(or another PMIx process manager) run",
    )
    variant(
        "fabrics",
        default="shm",
        values=("shm", "ofi"),
        multi=False,
        description="Transport between processes: shm = shared memory, one node "
        "(the only one so far); ofi = libfabric, across nodes (planned)",
    )
    variant("fortran", default=True,
            description="Fortran binding: mpif.h, modules mpi and mpi_f08, mpifort/mpif77/mpif90")
    variant("debug", default=False, description="Check internal invariants (FMPL_DEBUG)")
    # Redeclared to take FMPL's own default (CMakeLists.txt and the
    # Makefile build RelWithDebInfo; its benchmarks are measured so).
    variant(
        "build_type",
        default="RelWithDebInfo",
        description="CMake build type",
        values=("Debug", "Release", "RelWithDebInfo", "MinSizeRel"),
    )

    conflicts(
        "fabrics=ofi",
        msg="FMPL's libfabric (OFI) backend does not carry MPI jobs across nodes yet: "
        "shared memory on one node is the only transport (FMPL issue 13)",
    )
    conflicts("platform=darwin", msg="FMPL runs on Linux only")
    conflicts("platform=windows", msg="FMPL runs on Linux only")

    depends_on("c", type="build")
    depends_on("fortran", type="build", when="+fortran")
    # The C++ compiler is only recorded in mpicxx (FMPL has no C++ code).
    depends_on("cxx", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build", when="+pmix")
    depends_on("pmix@3:", when="+pmix")
    # For the day the backend lands; the conflict above rules it out today.
    depends_on("libfabric", when="fabrics=ofi")

    # The wrappers name the compiler FMPL was built with: Spack's compiler
    # wrappers at build time, replaced here by the real compilers (mpif77 and
    # mpif90 are links to mpifort).
    filter_compiler_wrappers("mpicc", "mpicxx", "mpifort", relative_root="bin")

    def cmake_args(self):
        args = [
            self.define_from_variant("FMPL_PMIX", "pmix"),
            self.define_from_variant("FMPL_DEBUG", "debug"),
            self.define_from_variant("FMPL_FORTRAN", "fortran"),
            self.define("FMPL_SANITIZE", False),
            # Never pick up a libfabric outside Spack's dependencies.
            self.define("FMPL_LIBFABRIC", self.spec.satisfies("fabrics=ofi")),
            # What is installed only: the test suite is most of the build.
            self.define("FMPL_TESTS", self.run_tests),
        ]
        if self.spec.satisfies("+pmix"):
            # Searched after pkg-config (cmake/FMPLPMIx.cmake).
            args.append(self.define("FMPL_PMIX_ROOT", self.spec["pmix"].prefix))
        return args

    @run_after("install")
    def check_pmix_used(self):
        """With +pmix, fail the installation if CMake went on without PMIx
        (FMPL's build then only prints a message): libmpi must need libpmix."""
        if not self.spec.satisfies("+pmix"):
            return
        libs = self.mpi_libs  # in lib/ or lib64/ (GNUInstallDirs)
        if not libs:
            raise InstallError("fmpl: no libmpi.so under " + self.prefix)
        with open(libs[0], "rb") as f:
            needs_pmix = b"libpmix.so" in f.read()  # its DT_NEEDED entry
        if not needs_pmix:
            raise InstallError(
                "fmpl+pmix: FMPL was built without PMIx support "
                "(see the 'FMPL: PMIx support' line of the CMake output); "
                "install with ~pmix or give a working pmix"
            )

    # The libraries dependents get: libmpi (MPI and the native API) for
    # spec["mpi"].libs, libfmpl (native API alone) for spec["fmpl"].libs.
    @property
    def mpi_libs(self):
        return find_libraries("libmpi", root=self.prefix, shared=True, recursive=True)

    @property
    def libs(self):
        return find_libraries("libfmpl", root=self.prefix, shared=True, recursive=True)

    def _wrappers(self):
        """The wrapper environment variables and their paths."""
        wrappers = {
            "MPICC": join_path(self.prefix.bin, "mpicc"),
            "MPICXX": join_path(self.prefix.bin, "mpicxx"),
        }
        if self.spec.satisfies("+fortran"):
            wrappers["MPIF77"] = join_path(self.prefix.bin, "mpif77")
            wrappers["MPIF90"] = join_path(self.prefix.bin, "mpif90")
            wrappers["MPIFC"] = join_path(self.prefix.bin, "mpifort")
        return wrappers

    def setup_run_environment(self, env):
        for name, path in self._wrappers().items():
            env.set(name, path)

    def setup_dependent_build_environment(self, env, dependent_spec):
        for name, path in self._wrappers().items():
            env.set(name, path)
        # Inside a dependent's build, FMPL's wrappers run Spack's compiler
        # wrappers (the variables mpicc and mpicxx read for their compiler).
        module = dependent_spec.package.module
        for name, attr in (("MPICC_CC", "spack_cc"), ("MPICXX_CXX", "spack_cxx")):
            if hasattr(module, attr):
                env.set(name, getattr(module, attr))

    def setup_dependent_package(self, module, dependent_spec):
        spec = self.spec
        spec.mpicc = join_path(self.prefix.bin, "mpicc")
        spec.mpicxx = join_path(self.prefix.bin, "mpicxx")
        if spec.satisfies("+fortran"):
            spec.mpif77 = join_path(self.prefix.bin, "mpif77")
            spec.mpifc = join_path(self.prefix.bin, "mpifort")

    def test_mpicc_two_ranks(self):
        """build an MPI program with the installed mpicc, run it on 2 ranks"""
        source = "fmpl_spack_hello.c"
        with open(source, "w", encoding="utf-8") as f:
            f.write(
                "#include <mpi.h>\n"
                "#include <stdio.h>\n"
                "int main(int argc, char **argv)\n"
                "{\n"
                "    int rank, size, sum = 0;\n"
                "    MPI_Init(&argc, &argv);\n"
                "    MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n"
                "    MPI_Comm_size(MPI_COMM_WORLD, &size);\n"
                "    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
                "    if (rank == 0)\n"
                '        printf("ranks %d sum %d\\n", size, sum);\n'
                "    return MPI_Finalize();\n"
                "}\n"
            )
        mpicc = which(join_path(self.prefix.bin, "mpicc"), required=True)
        mpicc("-o", "fmpl_spack_hello", source)
        mpirun = which(join_path(self.prefix.bin, "mpirun"), required=True)
        out = mpirun("-n", "2", "./fmpl_spack_hello", output=str.split, error=str.split)
        assert "ranks 2 sum 1" in out, out
