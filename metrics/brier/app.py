from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# The Space's own module, beside this file (evaluate.load("brier") would fetch evaluate-metric/brier).
module = evaluate.load(str(Path(__file__).resolve().with_name("brier.py")))
launch_gradio_widget(module)
