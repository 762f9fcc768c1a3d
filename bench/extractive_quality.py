"""How summaries written without a model read, over the hand-written PR descriptions of
tests/fixtures/pr_bodies, and how well the type agrees with the reports' types.

    .venv/bin/python bench/extractive_quality.py [--show NAME]

Counts summaries carrying template text, bare URLs, first person, leftover labels or cut-off
sentences (each must be 0); descriptions with test results or numbers whose Key insights carry
none; risks claimed without a signal the fixture's author found (0). The What-changed word
recall against the hand-written expectation is a proxy only: the issue's measure is a person's
rating, and the pairs are printed with --pairs for one. Type agreement is measured blind: the
rules were tuned on the reports' even PR numbers, and the odd ones are reported here (the
reports in ../shared/seeds when present, and store/sources/sample_reports).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from pr_bodies import FLAWS, fixtures, flaws, has_measurement, recall  # noqa: E402
from pr_factory import make_pr  # noqa: E402

from store.model import PullRequest  # noqa: E402
from store.sources.importer import read_report  # noqa: E402
from store.sources.sample import SAMPLE_DIR  # noqa: E402
from store.understanding.areas import classify  # noqa: E402
from store.understanding.summary import classify_type, extractive_summary  # noqa: E402
from store.understanding.summary.body import parse_body  # noqa: E402
from store.understanding.summary.signals import risks  # noqa: E402

REPO = "vllm-project/vllm"
REPORTS = [ROOT.parent / "shared" / "seeds", SAMPLE_DIR]
TZ = ZoneInfo("America/Los_Angeles")


def _report_prs() -> dict[int, PullRequest]:
    prs: dict[int, PullRequest] = {}
    for folder in REPORTS:
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            prs.update({pr.number: pr for pr in read_report(path, TZ).prs})
    return prs


def _agreement(prs: list[PullRequest]) -> str:
    agree = sum(classify_type(pr) == pr.type for pr in prs)
    return f"{agree}/{len(prs)} = {agree / len(prs):.2f}" if prs else "no reports"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", help="print the summary of the fixtures whose name contains this")
    parser.add_argument("--pairs", action="store_true", help="print each expectation beside What changed, for a person to rate")
    args = parser.parse_args()
    counts = dict.fromkeys(FLAWS, 0)
    unsupported = missing_insights = measured = 0
    recalls = []
    for fixture in fixtures():
        pr = make_pr(fixture.number, fixture.title, repo=REPO, body=fixture.body, files=fixture.files,
                     additions=fixture.additions, deletions=fixture.deletions)
        summary = extractive_summary(pr)
        for flaw in flaws(summary):
            counts[flaw] += 1
        claimed = {risk.signal for risk in risks(pr, parse_body(pr.body), classify(pr.title, pr.files, [], REPO))[:3]}
        unsupported += len(claimed - fixture.signals)
        measured += fixture.measured
        missing_insights += fixture.measured and not has_measurement(summary.insights)
        recalls.append(recall(fixture.expect, summary.what_changed))
        if args.show and args.show in fixture.name:
            print(f"{fixture.name}\n" + "\n".join(f"  {key}: {text}" for key, text in summary.as_dict().items()))
        if args.pairs:
            print(f"{fixture.name}\n  expected: {fixture.expect}\n  written:  {summary.what_changed}")
    print(f"fixtures: {len(recalls)}")
    for flaw, count in counts.items():
        print(f"summaries with {flaw}: {count}")
    print(f"with test results or numbers but none in Key insights: {missing_insights} of {measured}")
    print(f"risks claimed without a signal: {unsupported}")
    print(f"What changed word recall against the expectation (proxy): mean {sum(recalls) / len(recalls):.2f}, min {min(recalls):.2f}")
    prs = _report_prs()
    print(f"type agreement, tune half (even PR numbers): {_agreement([pr for n, pr in prs.items() if n % 2 == 0])}")
    print(f"type agreement, measure half (odd PR numbers): {_agreement([pr for n, pr in prs.items() if n % 2 == 1])}")


if __name__ == "__main__":
    main()
