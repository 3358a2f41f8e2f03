# downstream_tasks.py WORK DOCS: benchmarks/downstream_eval.sh's inputs under WORK: a corpus of random words
# (corpus.txt) and two tasks (tasks/choice: DOCS multiple-choice documents, a 120-word context and 4 choices of 12
# words; tasks/rolling: DOCS / 10 documents of 1500 words). Seeded: the same files every run.
import json
import os
import random
import sys

work, docs = sys.argv[1], int(sys.argv[2])
rnd = random.Random(0)
words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 8))) for _ in range(3000)]


def say(n):
    return " ".join(rnd.choice(words) for _ in range(n))


def write_task(name, output_type, lines):
    os.makedirs(os.path.join(work, "tasks", name))
    with open(os.path.join(work, "tasks", name, "task.toml"), "w") as f:
        f.write(f'name = "{name}"\nversion = 0\noutput_type = "{output_type}"\neval_docs = "test.jsonl"\n')
    with open(os.path.join(work, "tasks", name, "test.jsonl"), "w") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)


with open(os.path.join(work, "corpus.txt"), "w") as f:
    f.writelines(say(60) + "\n\n" for _ in range(4000))
write_task("choice", "multiple_choice",
           [{"query": say(120), "choices": [say(12) for _ in range(4)], "gold": 0} for _ in range(docs)])
write_task("rolling", "loglikelihood_rolling", [{"text": say(1500)} for _ in range(max(1, docs // 10))])
