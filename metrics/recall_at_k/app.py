from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# The Space's own module, beside this file (evaluate.load("recall_at_k") would fetch evaluate-metric/recall_at_k).
module = evaluate.load(str(Path(__file__).resolve().with_name("recall_at_k.py")))
launch_gradio_widget(module)
