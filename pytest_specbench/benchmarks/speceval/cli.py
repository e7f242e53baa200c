"""``specbench speceval ...`` subcommands (picked up by the ``specbench`` command
from the family folder)."""
from __future__ import annotations


def register(subparsers) -> None:
    group = subparsers.add_parser("speceval", help="SpecEval tools")
    sub = group.add_subparsers(dest="command", required=True)
    survey = sub.add_parser("survey", help="perturbation check and judgement label balance with the JML checker",
                            description="For each SpecGenBench program and category: does the ground truth hold "
                                        "on the tests after the perturbation; judgement mutants refuted or dropped.")
    survey.add_argument("data_root", nargs="?", default="../shared/datasets/specgenbench")
    survey.add_argument("--seed", type=int, default=0)
    survey.add_argument("--only", default="", help="comma-separated program names")
    survey.add_argument("--categories", default="", help="comma-separated categories (default: all six)")
    survey.set_defaults(func=_survey)


def _survey(args) -> int:
    from .survey import main

    argv = [args.data_root, "--seed", str(args.seed)]
    if args.only:
        argv += ["--only", args.only]
    if args.categories:
        argv += ["--categories", args.categories]
    return main(argv)
