from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# The Space's own module, beside this file (evaluate.load("das_ratio") would fetch evaluate-metric/das_ratio).
module = evaluate.load(str(Path(__file__).resolve().with_name("das_ratio.py")))
launch_gradio_widget(module)
