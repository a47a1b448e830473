"""Read experiment.md texts with ARI's own parsers and print what each one found.

    python experiment_parsers.py <ARI root> <texts.json>

texts.json: {"case id": "experiment.md text", ...}. For each text: the workflow hints
(partition, Max CPUs, provided files, min_expected_metric; ari-core agent/workflow.py), the
pipeline's Metrics line (pipeline/experiment_md.py), the evaluator's seeds (ari-skill-evaluator
server.py) and the dashboard's goal (viz/ui_helpers.py). Runs in ARI's venv with no
ARI_SLURM_* in the environment, so every value comes from the text. Prints one JSON object.
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(sys.argv[1]) / "ari-skill-evaluator" / "src"))
import server as evaluator  # noqa: E402  (ARI's evaluator MCP server module)
from ari.agent.workflow import WorkflowHints, from_experiment_text  # noqa: E402
from ari.pipeline.experiment_md import parse_metric_from_experiment_md  # noqa: E402
from ari.viz.ui_helpers import _extract_goal_from_md  # noqa: E402

default_min = WorkflowHints().min_expected_metric
out = {}
for case_id, text in json.load(open(sys.argv[2])).items():
    hints = from_experiment_text(text, hpc_enabled=True)
    out[case_id] = {
        "partition": hints.slurm_partition,
        "max_cpus": hints.slurm_max_cpus,
        "provided_files": [list(pair) for pair in hints.provided_files],
        "min_expected_metric": hints.min_expected_metric,
        "min_expected_metric_is_default": hints.min_expected_metric == default_min,
        "required_workflow": hints.post_survey_hint.startswith("Follow this workflow"),
        "pipeline_metric": parse_metric_from_experiment_md(text),
        "evaluator_metrics": evaluator._parse_success_metrics(text),
        "evaluator_metric_keyword": evaluator._parse_metric_keyword(text),
        "evaluator_min_expected": evaluator._parse_min_expected(text),
        "dashboard_goal": _extract_goal_from_md(text),
    }
print(json.dumps(out))
