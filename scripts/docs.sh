#!/usr/bin/env bash
# Builds the documentation site into build-docs/site with MkDocs (strict: a warning or a broken internal link fails),
# after writing what is generated: the layer diagram (dot, from core/CMakeLists.txt's kforge_layer table; built
# only, never checked in) and the checked-in reference pages docs/reference/{cli,config,sdk}.md (from `kforge help
# --format markdown`, `kforge config reference --format markdown` and the SDK headers), which it updates.
# With --check (CI, scripts/test.sh): fails instead when a checked-in reference page differs from its generator's
# output, then runs the doc tests (scripts/docs/doc_tests.py, with the demo data of scripts/fetch_data.sh) and opens
# the built index and configuration pages in headless Chromium (scripts/docs/browser_check.py).
set -euo pipefail
cd "$(dirname "$0")/.."
kforge=${KFORGE_BIN:-build/bin/kforge}
check=0
if [ "${1:-}" = "--check" ]; then
  check=1
elif [ $# -gt 0 ]; then
  echo "docs: unknown option '$1' (usage: scripts/docs.sh [--check])" >&2
  exit 2
fi
for tool in mkdocs dot tred; do
  command -v "$tool" >/dev/null || { echo "docs: '$tool' is missing: run scripts/setup.sh" >&2; exit 2; }
done
[ -x "$kforge" ] || { echo "docs: $kforge is missing: build it first (scripts/build.sh)" >&2; exit 2; }

out=build-docs
rm -rf "$out/docs" "$out/site"
mkdir -p "$out"
stale=()

# reference PAGE COMMAND...: PAGE (under docs/) is COMMAND's output; written, or with --check compared.
reference() {
  local page=$1
  shift
  "$@" > "$out/$(basename "$page").new"
  if [ "$check" = 1 ]; then
    if ! cmp -s "$out/$(basename "$page").new" "docs/$page"; then
      diff -u "docs/$page" "$out/$(basename "$page").new" | head -40 >&2 || true
      stale+=("docs/$page")
    fi
  else
    mv "$out/$(basename "$page").new" "docs/$page"
  fi
}
mkdir -p docs/reference
reference reference/cli.md "$kforge" help --format markdown
reference reference/config.md "$kforge" config reference --format markdown
reference reference/sdk.md python3 scripts/docs/sdk_reference.py sdk/include
# The layers' descriptions beside the diagram list exactly the build's layers.
python3 scripts/docs/layer_diagram.py core/CMakeLists.txt --table docs/concepts.md
if [ ${#stale[@]} -gt 0 ]; then
  echo "docs: ${stale[*]} differ(s) from what the code generates (diff above): run bash scripts/docs.sh and commit" >&2
  exit 1
fi

cp -r docs "$out/docs"
cat benchmarks/README.md docs/benchmarks.md > "$out/docs/benchmarks.md"  # the page is the benchmarks' README
python3 scripts/docs/layer_diagram.py core/CMakeLists.txt | tred | dot -Tsvg > "$out/docs/layers.svg"
printf 'INHERIT: ../mkdocs.yml\ndocs_dir: docs\nsite_dir: site\n' > "$out/mkdocs.yml"
mkdocs build --strict --quiet --config-file "$out/mkdocs.yml"
echo "docs: site built in $out/site (open $out/site/index.html)"

if [ "$check" = 1 ]; then
  KFORGE_BIN=$kforge bash scripts/fetch_data.sh
  KFORGE_BIN=$kforge bash scripts/fetch_data.sh --clips  # the photos too
  python3 scripts/docs/doc_tests.py
  python3 scripts/docs/browser_check.py "$out/site" index.html reference/config.html
fi
