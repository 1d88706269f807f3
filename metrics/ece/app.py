from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# The Space's own module, beside this file (evaluate.load("ece") would fetch evaluate-metric/ece).
module = evaluate.load(str(Path(__file__).resolve().with_name("ece.py")))
launch_gradio_widget(module)
