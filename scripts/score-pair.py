#!/usr/bin/env python3
"""Writes the answer-key/answer pair that `scripts/bench-score` times
(docs/PERFORMANCE.md, "Scoring a large answer").

    scripts/score-pair.py --out DIR [--rows 100000] [--short 10] [--seed 1]

DIR/reference.csv is the answer key's result: ROWS rows of five columns, a
place IRI (unique per row), a gene IRI from another namespace (50,000
distinct), a label, a decimal printed with six decimals and an integer
count. DIR/answer.csv holds the same rows shuffled with SHORT of them left
out, under the same column names; DIR/answer-renamed.csv is that answer
with its columns renamed and reordered, so the scorer falls back to sorted
tuples of values. The same arguments always write the same bytes.
"""

import argparse
import csv
import os
import random

WORDS = [
    "Alameda", "Butte", "Colusa", "Del Norte", "El Dorado", "Fresno", "Glenn",
    "Humboldt", "Imperial", "Inyo", "Kern", "Kings", "Lake", "Lassen",
    "Madera", "Marin", "Mariposa", "Mendocino", "Merced", "Modoc", "Mono",
    "Monterey", "Napa", "Nevada", "Orange", "Placer", "Plumas", "Riverside",
]


def rows(count, rng):
    for i in range(count):
        yield [
            f"https://purl.org/okn/frink/kg/spoke-okn/place/P{i:06d}",
            f"http://purl.obolibrary.org/obo/NCBIGene_{rng.randrange(50_000)}",
            f"{rng.choice(WORDS)} County {i}",
            f"{rng.uniform(0.0, 1000.0):.6f}",
            str(rng.randrange(10_000)),
        ]


def write(path, header, body):
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(header)
        out.writerows(body)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--short", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    key = list(rows(args.rows, rng))
    answer = key[:]
    rng.shuffle(answer)
    answer = answer[: max(0, len(answer) - args.short)]
    os.makedirs(args.out, exist_ok=True)
    header = ["place", "gene", "label", "value", "count"]
    write(os.path.join(args.out, "reference.csv"), header, key)
    write(os.path.join(args.out, "answer.csv"), header, answer)
    # Renamed and reordered: count, label, gene, value, place.
    renamed = ["n", "name", "g", "v", "place_iri"]
    order = [4, 2, 1, 3, 0]
    write(
        os.path.join(args.out, "answer-renamed.csv"),
        renamed,
        ([r[i] for i in order] for r in answer),
    )


if __name__ == "__main__":
    main()
