#!/usr/bin/python3
"""Writes the embedding and rerank goldens of models/tiny-embed*, models/tiny-rerank* from the float64 reference.

    python3 tools/reference/make_embedding_goldens.py models/tiny-embed models/tiny-embed-heldout \\
        models/tiny-rerank models/tiny-rerank-heldout

An embedding checkpoint (config with no lm_head in the checkpoint, or 1_Pooling) gets golden/embedding.json: for
each text, its ids (the text's tokens, then <|endoftext|> 151643, which Qwen3-Embedding's tokenizer appends), the
final-normed hidden state of the last token, L2-normalized ("vector"), and its first DIMENSIONS entries normalized
again ("truncated", Matryoshka). One text is a query in the model card's form `Instruct: {task}\\nQuery:{query}`.

A reranker gets golden/rerank.json: for each (query, document) pair, the ids of the model card's prompt (prefix,
then `<Instruct>: {instruction}\\n<Query>: {query}\\n<Document>: {doc}`, then the suffix, each tokenized on its own as
the card does), the "yes" and "no" logits at the last position and P(yes) = softmax over [no, yes].

Text is tokenized by `fs tokenize --jsonl` (fs's tokenizer, checked against Hugging Face's by the tokenizer goldens;
Debian has no Python tokenizers): what these goldens check is the forward and the pooling, with the ids recorded.
The prompt strings and the token ids of "yes", "no" and <|endoftext|> are the model card's and tokenizer.json's.
"""
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qwen3_reference import Qwen3Reference, load_checkpoint  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENDOFTEXT = 151643
DIMENSIONS = 8
TASK = "Given a web search query, retrieve relevant passages that answer the query"
TEXTS = [
    ("document", "The capital of China is Beijing."),
    ("document", "Gravity is a force that attracts two bodies towards each other."),
    ("query", "What is the capital of China?"),
    ("document", "fs runs Qwen3 on the JVM: naïve café ☕ — 42"),
]
RERANK_PREFIX = ("<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the"
                 " Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n"
                 "<|im_start|>user\n")
RERANK_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
QUERY = "What is the capital of China?"
DOCUMENTS = [
    "The capital of China is Beijing.",
    "Gravity is a force that attracts two bodies towards each other. It gives weight to physical objects.",
    "Beijing",
]
OTHER_INSTRUCTION = "Judge whether the document names a city"


def tokenize(directory, texts):
    lines = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    out = subprocess.run([os.path.join(ROOT, "fs"), "tokenize", directory, "--jsonl"], input=lines, text=True,
                         capture_output=True, check=True).stdout
    return [json.loads(line)["ids"] for line in out.splitlines()]


def vocab_id(directory, token):
    with open(os.path.join(directory, "tokenizer.json")) as f:
        return json.load(f)["model"]["vocab"][token]


def normalized(v):
    return v / torch.linalg.vector_norm(v)


def embedding_golden(directory, model):
    texts = [f"Instruct: {TASK}\nQuery:{t}" if kind == "query" else t for kind, t in TEXTS]
    cases = []
    for (kind, _), text, ids in zip(TEXTS, texts, tokenize(directory, texts)):
        ids = ids + [ENDOFTEXT]
        last = model.hidden(ids, model.new_cache())[-1]
        cases.append({"kind": kind, "text": text, "ids": ids, "vector": normalized(last).tolist(),
                      "truncated": normalized(last[:DIMENSIONS]).tolist()})
    return {"checkpoint": os.path.basename(os.path.normpath(directory)), "task": TASK, "dimensions": DIMENSIONS,
            "cases": cases}


def rerank_golden(directory, model):
    yes, no = vocab_id(directory, "yes"), vocab_id(directory, "no")
    pairs = [(TASK, QUERY, d) for d in DOCUMENTS] + [(OTHER_INSTRUCTION, QUERY, DOCUMENTS[2])]
    middles = [f"<Instruct>: {i}\n<Query>: {q}\n<Document>: {d}" for i, q, d in pairs]
    prefix, suffix, *middle_ids = tokenize(directory, [RERANK_PREFIX, RERANK_SUFFIX] + middles)
    cases = []
    for (instruction, query, document), ids in zip(pairs, middle_ids):
        ids = prefix + ids + suffix
        logits = model.forward(ids, model.new_cache())[-1]
        p_yes = torch.softmax(torch.stack([logits[no], logits[yes]]), dim=0)[1].item()
        cases.append({"instruction": instruction, "query": query, "document": document, "ids": ids,
                      "yes_logit": logits[yes].item(), "no_logit": logits[no].item(), "p_yes": p_yes})
    return {"checkpoint": os.path.basename(os.path.normpath(directory)), "yes_id": yes, "no_id": no,
            "cases": cases}


def main(dirs):
    for directory in dirs:
        config, weights = load_checkpoint(directory)
        model = Qwen3Reference(config, weights)
        embedding = model.lm_head is None or os.path.exists(os.path.join(directory, "1_Pooling"))
        golden = embedding_golden(directory, model) if embedding else rerank_golden(directory, model)
        name = "embedding.json" if embedding else "rerank.json"
        os.makedirs(os.path.join(directory, "golden"), exist_ok=True)
        with open(os.path.join(directory, "golden", name), "w") as f:
            json.dump(golden, f, indent=1)
            f.write("\n")
        print(f"{directory}/golden/{name}: {len(golden['cases'])} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
