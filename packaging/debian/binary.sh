#!/bin/sh
# Called by debian/rules binary-arch as: sh debian/binary.sh OBJDIR PREFIX
# (in the package build tree, with DEB_HOST_MULTIARCH set).
#
# Installs the CMake build into debian/stage, splits it into the three
# packages (debian/libfmpl0, debian/libfmpl-dev, debian/fmpl-bin), adds the
# public names (symbolic links, fmpl.pc, CMake forwarding files), maintainer
# scripts and control files, and builds the .deb files into ..
# Every installed file must be claimed by a package: a file nobody takes
# stops the build (so that new install rules are noticed here).
set -eu

OBJ=$1
PREFIX=$2
MA=${DEB_HOST_MULTIARCH:?}
STAGE=debian/stage
L0=debian/libfmpl0
DEV=debian/libfmpl-dev
BIN=debian/fmpl-bin
PRIO=30                 # below Debian's MPICH (40) and Open MPI (50)
VERSION=$(dpkg-parsechangelog -SVersion)
UPSTREAM=${VERSION%%-*}

die() { echo "binary.sh: $*" >&2; exit 1; }

rm -rf "$STAGE" "$L0" "$DEV" "$BIN"
DESTDIR="$PWD/$STAGE" cmake --install "$OBJ"
[ -d "$STAGE$PREFIX" ] || die "cmake --install put nothing in $PREFIX"

# take [-o] PKGDIR PATTERN...: move the staged files matching each pattern
# (absolute paths, globs allowed) into the package.  Without -o a pattern
# that matches nothing is an error.
take() {
    optional=no
    if [ "$1" = -o ]; then optional=yes; shift; fi
    pkg=$1; shift
    for pattern in "$@"; do
        found=no
        for f in "$STAGE"$pattern; do
            [ -e "$f" ] || [ -L "$f" ] || continue
            found=yes
            rel=${f#"$STAGE"}
            mkdir -p "$pkg$(dirname "$rel")"
            mv "$f" "$pkg$rel"
        done
        [ $found = yes ] || [ $optional = yes ] || die "nothing installed matches $pattern"
    done
}

# link PKGDIR LINK TARGET: a symbolic link in the package.
link() {
    mkdir -p "$1$(dirname "$2")"
    ln -sfn "$3" "$1$2"
}

# --- libfmpl0: the shared libraries (FMPL's libmpi privately)
take $L0 "$PREFIX/lib/libfmpl.so.*" "$PREFIX/lib/libmpi.so.*"
take -o $L0 "$PREFIX/lib/libmpich.so.*"
# The Fortran binding (built when gfortran is there) under its names and
# MPICH's, and BLACS-FMPL.
take -o $L0 "$PREFIX/lib/libmpifort.so.*" "$PREFIX/lib/libmpichfort.so.*"
take $L0 "$PREFIX/lib/libblacs-fmpl.so.*"
soname=$(cd "$L0$PREFIX/lib" && ls libfmpl.so.[0-9]* | sed -n 's/^\(libfmpl\.so\.[0-9]*\)$/\1/p')
[ "$soname" = libfmpl.so.0 ] || die "libfmpl's SONAME is '$soname', the package is libfmpl0"
# libfmpl.so.0 in the public directory (it clashes with nothing); libmpi.so.12
# stays private: programs find it through their RUNPATH (mpicc adds one).
link $L0 "/usr/lib/$MA/libfmpl.so.0" "fmpl/lib/libfmpl.so.0"

# --- libfmpl-dev: headers, link-time libraries, package files, wrappers
take $DEV "$PREFIX/include" "$PREFIX/lib/libfmpl.so" "$PREFIX/lib/libfmpl.a" \
    "$PREFIX/lib/libmpi.so" "$PREFIX/lib/pkgconfig" "$PREFIX/lib/cmake" \
    "$PREFIX/bin/mpicc" "$PREFIX/bin/mpicxx"
take -o $DEV "$PREFIX/lib/libmpich.so"
take -o $DEV "$PREFIX/lib/libmpifort.so" "$PREFIX/lib/libmpichfort.so" \
    "$PREFIX/bin/mpifort" "$PREFIX/bin/mpif77" "$PREFIX/bin/mpif90"
take $DEV "$PREFIX/lib/libblacs-fmpl.so"
[ -e "$DEV$PREFIX/bin/mpifort" ] && link $DEV /usr/bin/mpifort.fmpl "../lib/$MA/fmpl/bin/mpifort"
link $DEV "/usr/lib/$MA/libfmpl.so" "fmpl/lib/libfmpl.so.0"
link $DEV /usr/bin/mpicc.fmpl "../lib/$MA/fmpl/bin/mpicc"
link $DEV /usr/bin/mpicxx.fmpl "../lib/$MA/fmpl/bin/mpicxx"
# fmpl.pc where pkg-config looks: the installed one with absolute paths
# (its ${pcfiledir} would be wrong here) and an rpath, since libmpi.so.12 is
# not in the linker's default path.
pc=$DEV$PREFIX/lib/pkgconfig/fmpl.pc
[ -f "$pc" ] || die "no fmpl.pc installed"
mkdir -p "$DEV/usr/lib/$MA/pkgconfig"
sed -e "s|^prefix=.*|prefix=$PREFIX|" \
    -e 's|^Libs: -L\${libdir}|Libs: -L${libdir} -Wl,-rpath,${libdir}|' \
    "$pc" > "$DEV/usr/lib/$MA/pkgconfig/fmpl.pc"
grep -q '^Libs: -L${libdir} -Wl,-rpath,${libdir} ' "$DEV/usr/lib/$MA/pkgconfig/fmpl.pc" ||
    die "fmpl.pc's Libs line is not '-L\${libdir} ...': update binary.sh"
# find_package(FMPL) from the default search path: forwarding files.
cmakedir=$DEV/usr/lib/$MA/cmake/FMPL
mkdir -p "$cmakedir"
for f in FMPLConfig.cmake FMPLConfigVersion.cmake; do
    [ -f "$DEV$PREFIX/lib/cmake/FMPL/$f" ] || die "no $f installed"
    printf '# FMPL (Debian package libfmpl-dev): the package files are in\n# %s.\ninclude("%s")\n' \
        "$PREFIX/lib/cmake/FMPL" "$PREFIX/lib/cmake/FMPL/$f" > "$cmakedir/$f"
done

# --- fmpl-bin: everything else in bin/ (fmplrun, mpirun, mpiexec, fmpl_info,
# the benchmarks)
take $BIN "$PREFIX/bin/fmplrun"
# The user documentation (README, docs/*.md, examples/) with the development
# files, where Debian keeps a package's documentation.
take $DEV /usr/share/doc/libfmpl-dev
take -o $BIN "$PREFIX/bin/*"
link $BIN /usr/bin/mpirun.fmpl "../lib/$MA/fmpl/bin/fmplrun"
link $BIN /usr/bin/mpiexec.fmpl "../lib/$MA/fmpl/bin/fmplrun"
for tool in "$BIN$PREFIX"/bin/fmpl*; do
    name=$(basename "$tool")
    link $BIN "/usr/bin/$name" "../lib/$MA/fmpl/bin/$name"
done

# --- manual pages, if any, in /usr/share/man/man<N>, gzipped.  Pages of
# names that are alternatives get the suffix .fmpl (mpicc.fmpl.1.gz) and go
# with the package of the program; other section 1 pages go to fmpl-bin,
# the other sections (library calls) to libfmpl-dev.
for page in "$STAGE$PREFIX"/share/man/man*/*; do
    [ -f "$page" ] || continue
    section=$(basename "$(dirname "$page")")
    name=$(basename "$page")
    name=${name%.gz}
    case $section in
        man1)
            name=${name%.1}
            case $name in
                mpicc|mpicxx) pkg=$DEV; dest=$name.fmpl.1.gz ;;
                mpirun|mpiexec) pkg=$BIN; dest=$name.fmpl.1.gz ;;
                *) pkg=$BIN; dest=$name.1.gz ;;
            esac ;;
        *) pkg=$DEV; dest=$name.gz ;;
    esac
    mkdir -p "$pkg/usr/share/man/$section"
    case $page in
        *.gz) cp "$page" "$pkg/usr/share/man/$section/$dest" ;;
        *) gzip -9nc "$page" > "$pkg/usr/share/man/$section/$dest" ;;
    esac
    rm -f "$page"
done
# Empty directories left behind go; any file left is unclaimed.
find "$STAGE" -depth -type d -empty -delete
if [ -d "$STAGE" ]; then
    echo "binary.sh: installed but in no package:" >&2
    find "$STAGE" ! -type d >&2
    exit 1
fi

# --- strip (unless DEB_BUILD_OPTIONS has nostrip)
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }
case " ${DEB_BUILD_OPTIONS:-} " in
    *" nostrip "*) ;;
    *)
        find $L0 $DEV $BIN -type f | while read -r f; do
            case $f in
                *.a) strip --strip-debug --enable-deterministic-archives "$f" ;;
                *.so*) is_elf "$f" && strip --strip-unneeded --remove-section=.comment --remove-section=.note "$f" ;;
                *) if is_elf "$f"; then strip --remove-section=.comment --remove-section=.note "$f"; fi ;;
            esac
        done ;;
esac

# --- documentation
for pkg in $L0 $DEV $BIN; do
    doc=$pkg/usr/share/doc/$(basename "$pkg")
    mkdir -p "$doc"
    cp debian/copyright "$doc/copyright"
    gzip -9nc debian/changelog > "$doc/changelog.Debian.gz"
done
cp debian/README.md "$DEV/usr/share/doc/libfmpl-dev/README.Debian.md"

# --- maintainer scripts and control data
for pkg in $L0 $DEV $BIN; do
    mkdir -p "$pkg/DEBIAN"
done
for script in libfmpl-dev.postinst libfmpl-dev.prerm fmpl-bin.postinst fmpl-bin.prerm; do
    pkg=debian/${script%.*}
    sed -e "s|@MA@|$MA|g" -e "s|@PREFIX@|$PREFIX|g" -e "s|@PRIO@|$PRIO|g" \
        "debian/$script.in" > "$pkg/DEBIAN/${script##*.}"
    chmod 0755 "$pkg/DEBIAN/${script##*.}"
    if grep -q '@[A-Z]*@' "$pkg/DEBIAN/${script##*.}"; then
        die "unsubstituted placeholder in $script"
    fi
done
# The runtime library: ldconfig runs after installation and removal; other
# packages linking libfmpl.so.0 depend on libfmpl0 (>= this upstream version).
echo "activate-noawait ldconfig" > $L0/DEBIAN/triggers
echo "libfmpl 0 libfmpl0 (>= $UPSTREAM)" > $L0/DEBIAN/shlibs
# For this build only (binaries of fmpl-bin link the private libmpi.so.12).
echo "libmpi 12 libfmpl0 (= $VERSION)" > debian/shlibs.local
for pkg in $L0 $DEV $BIN; do
    chmod 0644 "$pkg/DEBIAN/triggers" "$pkg/DEBIAN/shlibs" 2>/dev/null || true
done

rm -f debian/files debian/*.substvars
# Shared-library dependencies of the ELF files of libfmpl0 and fmpl-bin.
elfs() { find "$1" -path "$1/DEBIAN" -prune -o -type f -print | while read -r f; do
             if is_elf "$f"; then echo "$f"; fi; done; }
for pkg in libfmpl0 fmpl-bin; do
    # shellcheck disable=SC2046
    dpkg-shlibdeps -T"debian/$pkg.substvars" \
        -l"$L0$PREFIX/lib" -l"$L0/usr/lib/$MA" $(elfs "debian/$pkg")
done

for pkg in libfmpl0 libfmpl-dev fmpl-bin; do
    dir=debian/$pkg
    find "$dir" -path "$dir/DEBIAN" -prune -o -type f -print | sort | sed "s|^$dir/||" |
        xargs -r -d '\n' sh -c 'cd "$0" && md5sum "$@"' "$dir" > "$dir/DEBIAN/md5sums"
    [ -f "debian/$pkg.substvars" ] || : > "debian/$pkg.substvars"
    dpkg-gencontrol -p"$pkg" -P"$dir" -T"debian/$pkg.substvars"
    find "$dir" -type d -exec chmod 0755 {} +
    dpkg-deb --root-owner-group --build "$dir" ..
done
