from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# The Space's own module, beside this file (evaluate.load("ood_detection") would fetch evaluate-metric/ood_detection).
module = evaluate.load(str(Path(__file__).resolve().with_name("ood_detection.py")))
launch_gradio_widget(module)
