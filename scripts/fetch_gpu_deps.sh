#!/usr/bin/env bash
# Purpose: gather, on a Debian 12 machine that reaches the apt mirror, the Debian packages a kforge build needs
# and a GPU machine with only a CUDA PyTorch lacks, so that scripts/gpu_check.sh can build kforge there with
# no network and no root. Nothing is installed: each package is fetched with `apt-get download` and unpacked
# with `dpkg-deb -x` into DIR (DIR/usr/include, DIR/usr/lib/x86_64-linux-gnu, ...).
#
#   bash scripts/fetch_gpu_deps.sh [--pack] DIR      (gpu_check.sh reads shared/gpu-deps by default)
#
# --pack: then write DIR.tar.xz and remove DIR. DIR is about 70 MiB (ICU's data alone is 30), more than the
# 64 MiB working tree that travels to the GPU machine; the archive is about 19 MiB, and gpu_check.sh unpacks
# DIR.tar.xz when DIR is absent.
# Not fetched: LibTorch, python3-torch and Gloo (the GPU machine brings its own CUDA PyTorch), and the codec
# libraries FFmpeg's libav* load (x264, x265, vpx, ...: over 150 MiB). The video plugin links without them,
# and gpu_check.sh sets it aside when it cannot load. Docs and static libraries are dropped, and Boost is cut
# to the headers that kforge's Boost includes reach.
set -euo pipefail

# Headers, .so links, pkg-config and CMake package files for the find_package / pkg_check_modules calls of
# CMakeLists.txt, core/, plugins/ and tests/, and the header-only cxxopts and Boost.DLL.
dev=(
  libtomlplusplus-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libcxxopts-dev libboost1.74-dev
  libsentencepiece-dev libgtest-dev libgmock-dev libxxhash-dev libarchive-dev libpcre2-dev libutf8proc-dev
  libjpeg62-turbo-dev libpng-dev libwebp-dev zlib1g-dev
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libswresample-dev
)
# The shared libraries those link, and what those need in turn (libarchive: acl, bz2, lz4, lzma, nettle,
# zstd, libxml2 and its ICU).
runtime=(
  libtomlplusplus3 libspdlog1.10 libfmt9 libsentencepiece0 libxxhash0 libarchive13 libpcre2-8-0 libutf8proc2
  libjpeg62-turbo libpng16-16 libwebp7 zlib1g libavformat59 libavcodec59 libswscale6 libavutil57 libswresample4
  libacl1 libbz2-1.0 liblz4-1 liblzma5 libnettle8 libzstd1 libxml2 libicu72
)
# Tools: pkg-config (CMake's FindPkgConfig needs one) and xxhsum (the checkpoint tests check checksums with it).
tools=(pkgconf pkgconf-bin libpkgconf3 xxhash)

pack=0
if [ "${1:-}" = "--pack" ]; then pack=1; shift; fi
if [ $# -ne 1 ] || [[ "$1" == -* ]]; then
  echo "usage: bash scripts/fetch_gpu_deps.sh [--pack] DIR" >&2
  exit 64
fi
mkdir -p "$1"
dir=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."   # the repository: its Boost includes are read below
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Fetch and unpack, one line per package.
for pkg in "${dev[@]}" "${runtime[@]}" "${tools[@]}"; do
  if ! out=$(cd "$tmp" && apt-get download "$pkg" 2>&1); then
    printf 'fetch_gpu_deps: cannot download %s:\n%s\n' "$pkg" "$out" >&2
    echo "fetch_gpu_deps: (no package lists? 'apt-get update' as root fetches them)" >&2
    exit 1
  fi
  deb=$(ls "$tmp/${pkg}_"*.deb)
  dpkg-deb -x "$deb" "$dir"
  printf '%-22s %-26s %6s KiB\n' "$pkg" "$(dpkg-deb -f "$deb" Version)" "$(( $(stat -c %s "$deb") / 1024 ))"
  rm -f "$deb"
done

# Debian 12 still ships some libraries in /lib (zlib, bzip2, lzma): merge them into usr/lib, and point the
# -dev packages' absolute links (libz.so -> /lib/x86_64-linux-gnu/libz.so.1.2.13) inside DIR.
if [ -d "$dir/lib" ]; then
  cp -a "$dir/lib/." "$dir/usr/lib/"
  rm -rf "${dir:?}/lib"
fi
find "$dir" -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
  target=$(readlink "$link")
  ln -sfr "$dir/usr/${target#/usr/}" "$link"
done

# Drop what no build reads: docs, manuals, sources, static libraries (GoogleTest's are its only build), and
# the ICU libraries that libxml2 does not load.
rm -rf "$dir"/usr/share/{doc,man,info,lintian,locale,bug,gdb} "$dir/usr/src"
find "$dir" -name '*.a' ! -name 'libgtest*' ! -name 'libgmock*' -delete
rm -f "$dir"/usr/lib/x86_64-linux-gnu/libicu{i18n,io,test,tu}.so*
# Boost: keep the headers kforge's Boost includes reach (g++ -M), and all of boost/config and boost/predef
# (another compiler may pick other files there): about 1 MB of the 140.
boost_includes=$(grep -rhoE --include='*.cpp' --include='*.h' --include='*.hpp' '#include <boost/[^>]+>' \
                   core sdk plugins tests examples 2>/dev/null | sort -u)
if [ -n "$boost_includes" ] && command -v g++ >/dev/null; then
  inc="$dir/usr/include"
  # shellcheck disable=SC1003  # (tr splits g++ -M's rule at spaces and line-continuation backslashes)
  { printf '%s\n' "$boost_includes" | g++ -std=c++20 -DBOOST_DLL_USE_STD_FS -isystem "$inc" -M -x c++ - |
      tr -s ' \\' '\n' | grep -F "$inc/boost/" | xargs -r realpath -ms
    find "$inc/boost/config" "$inc/boost/predef" -type f
  } | sort -u > "$tmp/boost-keep"
  find "$inc/boost" -type f | sort | comm -23 - "$tmp/boost-keep" | xargs -r -d '\n' rm -f
  find "$inc/boost" -type d -empty -delete
  echo "fetch_gpu_deps: Boost cut to $(wc -l < "$tmp/boost-keep") headers"
else
  echo "fetch_gpu_deps: warning: no g++ here, or no Boost include in the sources: Boost kept whole (140 MB)" >&2
fi

# The libraries DIR's libraries and tools need that DIR lacks: the GPU machine's own (besides glibc, libstdc++
# and libgcc, listed here), or FFmpeg's codecs (see the top of this file).
lib="$dir/usr/lib/x86_64-linux-gnu"
missing=$(find "$lib" "$dir/usr/bin" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
  xargs -0 readelf -d 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u |
  while read -r needed; do [ -e "$lib/$needed" ] || echo "$needed"; done |
  grep -vE '^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so') || true
echo "fetch_gpu_deps: $(printf '%s' "$missing" | wc -w) libraries needed but not carried:"
printf '%s\n' "$missing" | tr '\n' ' ' | fold -s -w 110 | sed 's/^/  /'
echo

echo "fetch_gpu_deps: $dir: $(du -sh "$dir" | cut -f1), $(find "$dir" -type f | wc -l) files"
if [ "$pack" = 1 ]; then
  tar -C "$dir" -cJf "$dir.tar.xz" .
  rm -rf "$dir"
  echo "fetch_gpu_deps: packed into $dir.tar.xz: $(du -sh "$dir.tar.xz" | cut -f1)"
fi
