"""How a run's log tail shows ARI's lines: a stage's paragraph cut after its first sentence,
LiteLLM's exit lines left out, everything else as log_text shows it."""
import pytest

from ari_jupyter.ari.markers import shown_log_line

STAGE = ("[Paper Pipeline] Stage [ors_seed_sandbox]: Seed repro_sandbox/ from the curated EAR bundle "
         "published by ear_publish (file:// local-tarball by default). When ear is OFF or ear_publish "
         "skipped, publish_record.json is absent and this stage no-ops.")


@pytest.mark.parametrize("line, shown", [
    (STAGE, "[Paper Pipeline] Stage [ors_seed_sandbox]: Seed repro_sandbox/ from the curated EAR bundle "
            "published by ear_publish (file:// local-tarball by default). …"),
    ("[Paper Pipeline] Stage [ors_grade]: DONE", "[Paper Pipeline] Stage [ors_grade]: DONE"),
    ("[Paper Pipeline] Stage [render_paper]: Render the paper.", "[Paper Pipeline] Stage [render_paper]: Render the paper."),
    ("[Paper Pipeline] Stage [x]: Uses e.g. a dot. Then more", "[Paper Pipeline] Stage [x]: Uses e.g. a dot. …"),
    ("09:02:41 - LiteLLM:INFO: logging_worker.py:615 - [LoggingWorker] atexit: Flushing 3 remaining events...", None),
    ("09:02:41 - LiteLLM:INFO: logging_worker.py:615 - [LoggingWorker] atexit: Successfully flushed 3 events!", None),
    ("09:02:40 - LiteLLM:INFO: utils.py:3000 - LiteLLM completion() model= gpt-4o",
     "09:02:40 - LiteLLM:INFO: utils.py:3000 - LiteLLM completion() model= gpt-4o"),
    ("[Paper Pipeline] Complete: ['a', 'b']", "[Paper Pipeline] Complete: ['a', 'b']"),
])
def test_a_log_line_as_the_tail_shows_it(line, shown):
    assert shown_log_line(line) == shown
