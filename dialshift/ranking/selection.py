"""Scoring a Korean response-selection model's predictions (Han et al. 2021): ``kor_adv`` and ``kor_chitchat``."""

from pathlib import Path

ADVERSARIAL_CONFIG, IN_DOMAIN_CONFIG = "kor_adv", "kor_chitchat"


def score_predictions(predictions_dir, dataset, replicates: int = 1000) -> dict:
    """``dialshift.scoring`` on each config folder of the predictions (``results.json`` there: P@1, per adversarial
    type for ``kor_adv``), plus the adversarial ECE: the ``response_ranking`` task's ECE over the two responses'
    probabilities (``pairwise_selection`` computes none). Returns ``{config: results}``."""
    from dialshift.configs import BenchmarkConfig
    from dialshift.scoring import ScoringSettings, score_directory, write_results
    from dialshift.scoring.gold import load_gold
    from dialshift.scoring.pipeline import read_predictions
    from dialshift.scoring.tasks import get_task

    results = {}
    for config in (ADVERSARIAL_CONFIG, IN_DOMAIN_CONFIG):
        folder = Path(predictions_dir) / config
        settings = ScoringSettings(dataset=Path(dataset), replicates=replicates)
        document = score_directory(folder, settings)
        if config == ADVERSARIAL_CONFIG:
            ranking = get_task("response_ranking")
            options = ranking.resolve_options(BenchmarkConfig(config, "korean", "response_ranking"))
            scoring = document["scoring"]  # the subsample run.json asked for, as the scored gold
            gold = load_gold(settings.dataset, config, "test", ranking.gold_columns,
                             max_instances=scoring["max_instances"], sample_seed=scoring["sample_seed"])
            stats = read_predictions(folder / f"{config}.jsonl", ranking, gold, options)
            document["results"][config]["ece"] = ranking.metrics(stats, options)["ece"]
        write_results(folder, document, plots=False)
        results[config] = document["results"][config]
    return results
