// Every file format kforge writes, read back by a reader that is not kforge's: safetensors shards,
// .npy shards, metrics.jsonl and Chrome traces, parsed by python3 (tests/oracles/read_formats.py).
