#!/bin/sh
# packaging/debian/build-deb.sh: build FMPL's Debian packages (`make deb`).
#
#   packaging/debian/build-deb.sh [OUTDIR]
#
# Makes OUTDIR/fmpl-<version>/ (default OUTDIR: build-deb/ in the
# repository) with debian/ a copy of packaging/debian/ and source/ a link to
# the repository, runs `dpkg-buildpackage -us -uc -b` there, and leaves
#   OUTDIR/libfmpl0_<version>_<arch>.deb      runtime libraries
#   OUTDIR/libfmpl-dev_<version>_<arch>.deb   headers, wrappers, pkg-config, CMake
#   OUTDIR/fmpl-bin_<version>_<arch>.deb      fmplrun, fmpl_info, benchmarks
# The repository itself is not written to (no debian/ at its top).
# Build dependencies: cmake, a C compiler, dpkg-dev, build-essential (and
# ninja-build, libpmix-dev if wanted: used when present); as root, missing
# ones are installed with apt-get.  Works as root or as a user.
# The Debian version is <project version>-1, or FMPL_DEB_VERSION;
# FMPL_DEB_MAINTAINER sets the maintainer (name <address>).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/build-deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Build dependencies: as root, apt-get installs what is missing (like
# tools/install-deps.sh); other users are told the command.
# (dpkg-buildpackage also wants build-essential, implicitly.)
need=""
for pkg in dpkg-dev build-essential; do
    dpkg-query -W -f='${Status}\n' $pkg 2>/dev/null | grep -q '^install ok installed$' ||
        need="$need $pkg"
done
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "build-deb.sh: installing$need"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
    else
        echo "build-deb.sh: missing$need; run: sudo apt-get install -y$need" >&2
        exit 1
    fi
fi

upstream=$(sed -n 's/^project(FMPL VERSION \([0-9][0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[ -n "$upstream" ] || { echo "build-deb.sh: no project(FMPL VERSION ...) in CMakeLists.txt" >&2; exit 1; }
version=${FMPL_DEB_VERSION:-$upstream-1}

# The maintainer in the changelog and control (placeholder address: the
# project has no mailing address of its own yet).
maintainer=${FMPL_DEB_MAINTAINER:-FMPL developers <fmpl@example.org>}

tree=$out/fmpl-$upstream
rm -rf "$tree"
rm -f "$out"/libfmpl0_*.deb "$out"/libfmpl-dev_*.deb "$out"/fmpl-bin_*.deb \
      "$out"/fmpl_*.buildinfo "$out"/fmpl_*.changes
mkdir -p "$tree"
cp -R "$here" "$tree/debian"
ln -s "$root" "$tree/source"
chmod 0755 "$tree/debian/rules"
sed -i "s|^Maintainer: .*|Maintainer: $maintainer|" "$tree/debian/control"

# The changelog: one entry for this build, dated by the last commit when
# the repository is a git checkout (reproducible), else now.
commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
date=$(git -C "$root" log -1 --format=%aD 2>/dev/null || date -R)
[ -n "$date" ] || date=$(date -R)
cat > "$tree/debian/changelog" <<EOF
fmpl ($version) unstable; urgency=medium

  * Built from the FMPL repository at $commit
    by packaging/debian/build-deb.sh.

 -- $maintainer  $date
EOF

echo "build-deb.sh: building FMPL $version in $tree"
(cd "$tree" && dpkg-buildpackage -us -uc -b)

echo
echo "build-deb.sh: Debian packages of FMPL $version in $out:"
found=0
for deb in "$out"/libfmpl0_*.deb "$out"/libfmpl-dev_*.deb "$out"/fmpl-bin_*.deb; do
    [ -f "$deb" ] || continue
    found=$((found + 1))
    printf '  %s (%s bytes)\n' "$deb" "$(stat -c %s "$deb")"
done
[ "$found" -eq 3 ] || { echo "build-deb.sh: expected 3 packages, found $found" >&2; exit 1; }
echo "Install with: apt-get install $out/*.deb   (or dpkg -i)"
