#!/usr/bin/env python3
"""The peer scorer's rule, as the baseline `scripts/bench-score` times
(docs/PERFORMANCE.md, "Scoring a large answer"):

    scripts/sorted-tuple-score.py REFERENCE.csv ANSWER.csv

Each row of either CSV (header skipped) becomes the sorted tuple of its
cell texts, the two multisets of tuples are compared, and exact,
precision, recall and F1 are printed as JSON. No IRI, literal or number
rules: the simplest denotation scorer, written with the standard library
only, as a Python benchmark harness scores.
"""

import csv
import json
import sys
from collections import Counter


def multiset(path):
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        next(reader, None)
        return Counter(tuple(sorted(row)) for row in reader)


def main():
    key = multiset(sys.argv[1])
    answer = multiset(sys.argv[2])
    matched = sum((key & answer).values())
    key_rows = sum(key.values())
    answer_rows = sum(answer.values())
    precision = matched / answer_rows if answer_rows else float(key_rows == 0)
    recall = matched / key_rows if key_rows else float(answer_rows == 0)
    f1 = 2 * precision * recall / (precision + recall) if matched else float(
        key_rows == answer_rows == 0
    )
    print(json.dumps({
        "exact": key == answer,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "key_rows": key_rows,
        "answer_rows": answer_rows,
        "matched_rows": matched,
    }, indent=2))


if __name__ == "__main__":
    main()
