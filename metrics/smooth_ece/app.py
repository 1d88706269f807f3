from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# The Space's own module, beside this file (evaluate.load("smooth_ece") would fetch evaluate-metric/smooth_ece).
module = evaluate.load(str(Path(__file__).resolve().with_name("smooth_ece.py")))
launch_gradio_widget(module)
