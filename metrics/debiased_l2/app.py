from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# The Space's own module, beside this file (evaluate.load("debiased_l2") would fetch evaluate-metric/debiased_l2).
module = evaluate.load(str(Path(__file__).resolve().with_name("debiased_l2.py")))
launch_gradio_widget(module)
