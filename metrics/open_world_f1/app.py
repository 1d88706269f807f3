from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# The Space's own module, beside this file (evaluate.load("open_world_f1") would fetch evaluate-metric/open_world_f1).
module = evaluate.load(str(Path(__file__).resolve().with_name("open_world_f1.py")))
launch_gradio_widget(module)
